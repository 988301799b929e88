// Flat config: recommended JS + type-aware TypeScript rules for project sources.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/**", "dist/**", "prisma/generated/**", "data/**", "recordings/**", ".tmp/**", "**/*.js", "!eslint.config.js"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    rules: {
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-console": ["error", { allow: ["error"] }],
    },
  },
  {
    files: ["test/**/*.ts", "scripts/**/*.ts", "bench/**/*.ts", "examples/**/*.ts"],
    rules: { "no-console": "off" },
  },
);
