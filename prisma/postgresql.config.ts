// Prisma CLI config for the PostgreSQL client (used by `prisma generate` only).
import { defineConfig } from "prisma/config";

export default defineConfig({
  schema: "postgresql",
});
