/**
 * Timestamps on the direct SQLite path (db/sqlite-driver.ts), in the format Prisma's adapter
 * uses: ISO 8601 with `+00:00` (its default `timestampFormat`), so Prisma reads rows written here
 * back and compares them as text correctly.
 */

export const sqliteIso = (date: Date): string => date.toISOString().replace("Z", "+00:00");

export function sqliteDate(value: unknown): Date {
  // Text as written by the adapter; a number if a row was written with `unixepoch-ms`.
  const date = typeof value === "string" ? new Date(value) : new Date(Number(value));
  if (Number.isNaN(date.getTime())) throw new Error(`unreadable timestamp ${String(value)}`);
  return date;
}
