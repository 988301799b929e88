/**
 * Timestamps on the direct PostgreSQL path: columns are `timestamp(3)` holding UTC (Prisma's
 * mapping); values go in and out through `AT TIME ZONE 'UTC'` so the process's time zone never
 * matters.
 */

/** A timestamptz parameter as the UTC `timestamp` Prisma stores. */
export const pgUtcParam = (param: string): string => `(${param}::timestamptz AT TIME ZONE 'UTC')`;

/** A stored UTC `timestamp` column read as a timestamptz (a JS Date from pg). */
export const pgUtcColumn = (column: string): string => `(${column} AT TIME ZONE 'UTC')`;

export function pgDate(value: unknown): Date {
  if (value instanceof Date) return value;
  throw new Error(`unexpected timestamp ${String(value)}`);
}
