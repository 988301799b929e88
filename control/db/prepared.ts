import type Database from "better-sqlite3";

/**
 * Statements prepared once per SQLite connection: `prepare` runs the first time a connection is
 * seen (the adapter may reconnect, so the statements follow the connection, never outlive it).
 */
export function preparedPerConnection<T>(prepare: (db: Database.Database) => T): (db: Database.Database) => T {
  const byConnection = new WeakMap<Database.Database, T>();
  return (db) => {
    let statements = byConnection.get(db);
    if (statements === undefined) byConnection.set(db, (statements = prepare(db)));
    return statements;
  };
}
