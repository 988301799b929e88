/**
 * An instance cut off from its database (in-process, fake worker, PostgreSQL through a TCP relay
 * the test cuts): requests that need the database answer 503 with Retry-After in their family's
 * shape instead of 500, and the unauthenticated `/readyz` says "database unreachable" without the
 * driver's text. Also which errors count as "unreachable" (control/http/database-unreachable.ts).
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { MEETING_URL } from "../bot/fixtures/bot-app.ts";
import { isDatabaseUnreachable } from "../../control/http/database-unreachable.ts";
import { clusterDatabase, startInProcessNode } from "./fixtures/cluster.ts";
import { startTcpProxy } from "./fixtures/tcp-proxy.ts";

type Json = Record<string, unknown>;

test("what counts as an unreachable database", () => {
  // Prisma over @prisma/adapter-pg, database closed to connections (ALLOW_CONNECTIONS false).
  const closed = Object.assign(new Error("Raw query failed. Code: `55000`."), {
    name: "PrismaClientKnownRequestError",
    code: "P2010",
    meta: { driverAdapterError: { name: "DriverAdapterError", cause: { kind: "postgres", code: "55000", severity: "FATAL", message: 'database "x" is not currently accepting connections' } } },
  });
  assert.ok(isDatabaseUnreachable(closed));
  assert.ok(isDatabaseUnreachable(new Error("Connection terminated unexpectedly")));
  assert.ok(isDatabaseUnreachable(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" })));
  assert.ok(isDatabaseUnreachable(new AggregateError([Object.assign(new Error("refused"), { code: "ECONNREFUSED" })])));
  assert.ok(isDatabaseUnreachable(Object.assign(new Error("init"), { name: "PrismaClientInitializationError" })));
  assert.ok(isDatabaseUnreachable(Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01", severity: "FATAL" })));
  // Bugs and refusals stay what they are.
  assert.ok(!isDatabaseUnreachable(Object.assign(new Error("Unique constraint failed"), { code: "P2002", meta: { driverAdapterError: { cause: { kind: "UniqueConstraintViolation" } } } })));
  assert.ok(!isDatabaseUnreachable(Object.assign(new Error("syntax error"), { code: "42601", severity: "ERROR" })));
  assert.ok(!isDatabaseUnreachable(new TypeError("x is undefined")));
});

describe("database outage (fake worker)", { skip: !providers().includes("postgresql") && "PostgreSQL only", timeout: 120_000 }, () => {
  test("503 with Retry-After instead of 500, and /readyz without internals", async (t) => {
    const db = await clusterDatabase(t);
    const target = new URL(db.url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const node = await startInProcessNode({ db, id: "outage", databaseUrl: proxy.through(db.url), auth: {} });
    db.cleanup(() => proxy.close());
    db.cleanup(() => proxy.restore());
    assert.equal((await node.request("GET", "/readyz")).status, 200);

    proxy.cut();
    const unavailable = (r: { status: number; headers: Headers; text: string }, what: string): void => {
      assert.equal(r.status, 503, `${what}: ${r.text}`);
      assert.ok(Number(r.headers.get("retry-after")) > 0, `${what}: Retry-After`);
    };
    for (const [method, path, body] of [
      ["GET", `/status/${randomUUID()}`, undefined],
      ["GET", "/", undefined],
      ["POST", "/join", { meeting_url: MEETING_URL }],
    ] as const) {
      const r = await node.request(method, path, { body });
      unavailable(r, `${method} ${path}`);
      assert.equal(typeof r.body.detail, "string", r.text);
    }
    const login = await node.request("POST", "/auth/login", { body: { identifier: "someone", password: "a password" } });
    unavailable(login, "POST /auth/login");
    assert.equal(login.body.error, "temporarily_unavailable", login.text);
    assert.equal(typeof login.body.error_description, "string");

    const ready = await node.request("GET", "/readyz");
    assert.equal(ready.status, 503);
    assert.equal((ready.body.problems as Json).database, "database unreachable");
    assert.ok(!ready.text.includes(target.pathname.slice(1)), `no database name in /readyz: ${ready.text}`);
    assert.ok(!/prisma|invocation/i.test(ready.text), ready.text);

    proxy.restore();
    const deadline = Date.now() + 20_000;
    while ((await node.request("GET", "/readyz")).status !== 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    assert.equal((await node.request("GET", "/")).status, 200, "back once the database is");
  });
});
