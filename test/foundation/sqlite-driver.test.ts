/**
 * The direct SQLite path (control/db/sqlite-driver.ts) shares Prisma's one connection. The
 * hazard it must avoid: running its statements inside a Prisma interactive transaction that is
 * open on that connection (they would commit or roll back with somebody else's work, or BEGIN
 * would fail). It must wait for that transaction to end, then run in a transaction of its own.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { openDatabase, type Database } from "../../control/db/client.ts";
import { freshDatabase, type FreshDatabase } from "../harness/databases.ts";
import { captureLogs } from "../harness/logs.ts";

const { logger } = captureLogs("warn");

describe("direct SQLite transactions beside Prisma's", () => {
  let fresh: FreshDatabase;
  let database: Database;
  before(async () => {
    fresh = await freshDatabase("sqlite");
    database = await openDatabase(fresh.url, logger);
  });
  after(async () => {
    await database.close();
    await fresh.drop();
  });

  const userData = (id: string) => ({ id, securityStamp: "s" });
  const countUsers = `SELECT count(*) AS n FROM "User"`;

  test("with no Prisma transaction open, runs at once and commits", async () => {
    const driver = database.driver;
    assert.equal(driver.kind, "sqlite");
    if (driver.kind !== "sqlite") return;
    const id = randomUUID();
    await driver.transaction((db) => db.prepare(`INSERT INTO "User" ("id", "securityStamp", "updatedAt") VALUES (?, 's', ?)`).run(id, new Date().toISOString()));
    assert.ok(await database.db.user.findUnique({ where: { id } }));
  });

  test("waits for an open interactive transaction, which then rolls back alone", async () => {
    const driver = database.driver;
    if (driver.kind !== "sqlite") return assert.fail("expected the SQLite driver");
    const events: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let opened!: () => void;
    const isOpen = new Promise<void>((resolve) => (opened = resolve));
    const doomed = randomUUID();
    const prismaTx = database.db
      .$transaction(async (tx) => {
        await tx.user.create({ data: userData(doomed) });
        opened();
        await held;
        events.push("prisma rolls back");
        throw new Error("roll back on purpose");
      })
      .catch((error: Error) => error.message);
    await isOpen;

    const direct = driver.transaction((db) => {
      events.push("direct runs");
      // Inside its own transaction: the doomed row of the other transaction is not part of it.
      return (db.prepare(countUsers).get() as { n: bigint }).n;
    });
    events.push("direct queued");
    release();
    const [prismaOutcome, seen] = await Promise.all([prismaTx, direct]);

    assert.equal(prismaOutcome, "roll back on purpose");
    assert.deepEqual(events, ["direct queued", "prisma rolls back", "direct runs"]);
    assert.equal(Number(seen), 1, "only the committed user of the first test");
    assert.equal(await database.db.user.findUnique({ where: { id: doomed } }), null);
  });

  test("a throw inside the unit rolls back everything it wrote", async () => {
    const driver = database.driver;
    if (driver.kind !== "sqlite") return assert.fail("expected the SQLite driver");
    const id = randomUUID();
    await assert.rejects(
      driver.transaction((db) => {
        db.prepare(`INSERT INTO "User" ("id", "securityStamp", "updatedAt") VALUES (?, 's', ?)`).run(id, new Date().toISOString());
        throw new Error("undo");
      }),
      /undo/,
    );
    assert.equal(await database.db.user.findUnique({ where: { id } }), null);
  });

  test("plain Prisma writes and single statements issued during an open transaction wait for it and survive its rollback", async () => {
    const driver = database.driver;
    if (driver.kind !== "sqlite") return assert.fail("expected the SQLite driver");
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let opened!: () => void;
    const isOpen = new Promise<void>((resolve) => (opened = resolve));
    const prismaTx = database.db
      .$transaction(async (tx) => {
        await tx.user.create({ data: userData(randomUUID()) });
        opened();
        await held;
        throw new Error("roll back on purpose");
      })
      .catch((error: Error) => error.message);
    await isOpen;
    const plain = Array.from({ length: 20 }, () => randomUUID());
    const single = randomUUID();
    let settled = 0;
    const writes = Promise.all([
      ...plain.map((id) => database.db.user.create({ data: userData(id) }).then(() => void (settled += 1))),
      driver.run((db) => db.prepare(`INSERT INTO "User" ("id", "securityStamp", "updatedAt") VALUES (?, 's', ?)`).run(single, new Date().toISOString())).then(() => void (settled += 1)),
    ]);
    // Let every queued write try its luck while the transaction is open: none may finish inside it.
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, 0, "no write ran inside the other transaction");
    release();
    assert.equal(await prismaTx, "roll back on purpose");
    await writes;
    assert.equal(await database.db.user.count({ where: { id: { in: [...plain, single] } } }), 21, "every write survived the rollback");
  });
});
