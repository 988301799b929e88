/**
 * WAL checkpoints run on a thread of their own (control/db/sqlite-checkpointer.ts): pages reach
 * the database file without the event loop's connection ever checkpointing (its automatic
 * checkpoint is only a backstop far above what these tests write), the WAL restarts once the
 * thread has caught up, and closing the database stops the thread and leaves no WAL behind.
 */
import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { randomUUID } from "node:crypto";
import Database from "better-sqlite3";
import { openDatabase, sqlitePath } from "../../control/db/client.ts";
import { BACKSTOP_PAGES, startCheckpointer } from "../../control/db/sqlite-checkpointer.ts";
import { migrateSqlite } from "../../control/db/migrate-sqlite.ts";
import type { SqliteDriver } from "../../control/db/sqlite-driver.ts";
import { freshDatabase } from "../harness/databases.ts";
import { captureLogs } from "../harness/logs.ts";

const { logger, lines } = captureLogs("warn");

/** One transaction per user row, as the hot paths commit: each appends a few pages to the WAL. */
function writeUsers(driver: SqliteDriver, count: number): void {
  for (let i = 0; i < count; i += 1) {
    void driver.transaction((db) => {
      const now = new Date().toISOString();
      db.prepare(`INSERT INTO "User" ("id", "createdAt", "updatedAt", "securityStamp") VALUES (?, ?, ?, ?)`).run(randomUUID(), now, now, randomUUID());
    });
  }
}

/**
 * Frames in the WAL now (`mxFrame`), read from the wal-index header in the `-shm` file (SQLite's
 * WAL format: a 32-bit native-order integer at offset 16) rather than by a checkpoint.
 */
function framesInWal(file: string): number {
  const header = Buffer.alloc(20);
  const fd = openSync(`${file}-shm`, "r");
  try {
    readSync(fd, header, 0, 20, 0);
  } finally {
    closeSync(fd);
  }
  return header.readUInt32LE(16);
}

async function until(what: string, condition: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await sleep(50);
  }
}

describe("SQLite checkpoints off the event loop", () => {
  const drops: Array<() => Promise<void>> = [];
  after(async () => {
    for (const drop of drops) await drop();
  });

  it("copies committed pages into the database file from its own thread, and the WAL restarts", async () => {
    const fresh = await freshDatabase("sqlite");
    drops.push(fresh.drop);
    const file = sqlitePath(fresh.url);
    const database = await openDatabase(fresh.url, logger);
    try {
      const driver = database.driver;
      assert.ok(driver?.kind === "sqlite");
      const connection = driver.connection();
      assert.equal(Number(connection.pragma("wal_autocheckpoint", { simple: true })), BACKSTOP_PAGES);

      const before = statSync(file).size;
      writeUsers(driver, 500);
      const walAfterWrites = statSync(`${file}-wal`).size;
      // 500 commits of a few pages each: far below the backstop, so the connection itself never
      // checkpointed; only the thread can move pages into the database file.
      assert.ok(walAfterWrites < BACKSTOP_PAGES * 4096, `WAL ${walAfterWrites} bytes`);
      await until("the database file holds the new pages", () => statSync(file).size > before);

      // Once the thread has caught up, the next commit starts the WAL over from its beginning: a
      // commit then finds the log holding only its own few pages, not the 500 commits' thousands.
      // (Read without checkpointing, which would make the restart happen by itself.)
      assert.ok(framesInWal(file) > 500, `${framesInWal(file)} frames after 500 commits`);
      let extra = 0;
      await until("the WAL restarts", () => {
        writeUsers(driver, 1);
        extra += 1;
        return framesInWal(file) < 50;
      });
      const rows = connection.prepare(`SELECT count(*) AS n FROM "User"`).get() as { n: bigint | number };
      assert.equal(Number(rows.n), 500 + extra);
    } finally {
      await database.close();
    }
    // The last connection to close checkpoints and removes the WAL: the thread's connection was
    // closed before it, so nothing is left open.
    assert.equal(existsSync(`${file}-wal`), false);
    assert.deepEqual(lines.filter((l) => l.includes("checkpoint")), []);
  });

  it("goes back to the connection's own checkpoints when the thread fails", async () => {
    const fresh = await freshDatabase("sqlite");
    drops.push(fresh.drop);
    await migrateSqlite(sqlitePath(fresh.url), logger);
    const connection = new Database(sqlitePath(fresh.url));
    try {
      // The thread cannot open a file that is not there: it fails at once.
      const checkpointer = startCheckpointer(`${sqlitePath(fresh.url)}.missing`, connection, logger);
      await until("the connection checkpoints by itself again", () => connection.pragma("wal_autocheckpoint", { simple: true }) === 1000);
      assert.ok(lines.some((l) => l.includes("the checkpoint thread failed")));
      await checkpointer.stop();
    } finally {
      connection.close();
    }
  });
});
