// Prisma CLI config for the embedded SQLite client (used by `prisma generate` only).
import { defineConfig } from "prisma/config";

export default defineConfig({
  schema: "sqlite",
});
