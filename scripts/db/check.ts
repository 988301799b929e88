/**
 * Exits 1 (printing the SQL) when prisma/models.prisma and the committed migrations disagree for
 * a provider (argument, default both). Runs the engine in its own process because PGlite (the
 * PostgreSQL shadow database) sets the exit code of the process that loaded it.
 */
import { PROVIDERS, pendingSchemaChanges, type Provider } from "./schema-engine.ts";

const wanted = (process.argv[2] ? [process.argv[2]] : PROVIDERS) as Provider[];
let drift = false;
for (const provider of wanted) {
  const sql = await pendingSchemaChanges(provider);
  if (sql !== "") {
    drift = true;
    console.log(`${provider}: the schema changed without a migration; run \`make db-diff NAME=...\`:\n${sql}`);
  } else {
    console.log(`${provider}: schema and migrations agree`);
  }
}
process.exit(drift ? 1 : 0);
