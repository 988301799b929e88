import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createLogger, type Logger } from "../../shared/log/logger.ts";
import { createWebhookOutbox, DEAD_LETTER_DIR, type WebhookOutbox, type WebhookOutboxOptions } from "../../control/webhooks/index.ts";
import { startReceiver, type ReceivedRequest, type Receiver } from "./fixtures/webhook-receiver.ts";
import { indexOf, samplePayload } from "./fixtures/payloads.ts";

const SECRET = `whsec_${randomBytes(24).toString("base64")}`;

interface Harness {
  dir: string;
  receiver: Receiver;
  logs: string[];
  logger: Logger;
  outbox(extra?: Partial<WebhookOutboxOptions>): WebhookOutbox;
}

async function harness(t: TestContext, respond?: Parameters<typeof startReceiver>[1]): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), "outbox-"));
  const receiver = await startReceiver(SECRET, respond);
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  const logger = createLogger({ level: "debug", destination });
  const outboxes: WebhookOutbox[] = [];
  t.after(async () => {
    await Promise.all(outboxes.map((o) => o.close()));
    await receiver.close();
    await rm(dir, { recursive: true, force: true });
    assert.ok(!logs.join("").includes(SECRET.slice(6)), "the secret never reaches the log");
  });
  return {
    dir,
    receiver,
    logs,
    logger,
    outbox(extra = {}) {
      const outbox = createWebhookOutbox({ dir, url: receiver.url, secret: SECRET, logger, minBackoffMs: 5, maxBackoffMs: 40, ...extra });
      outboxes.push(outbox);
      return outbox;
    },
  };
}

async function pendingFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.endsWith(".json"));
}

/** Per session: requests in arrival order must never go back to an earlier event or skip one. */
function assertStrictOrder(requests: ReceivedRequest[], sessionId: string, count: number): void {
  const mine = requests.filter((r) => r.sessionId === sessionId);
  let expected = 0;
  for (const request of mine) {
    assert.equal(indexOf(request.body), expected, `${sessionId}: event ${indexOf(request.body)} sent while ${expected} pending`);
    if (request.answered !== null && request.answered >= 200 && request.answered < 300) expected++;
  }
  assert.equal(expected, count, `${sessionId}: every event accepted once`);
}

test("a receiver answering 503 for a while gets every event, in order, signed, ids stable", async (t) => {
  let failuresLeft = 9;
  const h = await harness(t, () => (failuresLeft-- > 0 ? 503 : 204));
  const outbox = h.outbox();
  await outbox.start();
  for (let i = 0; i < 3; i++) {
    await Promise.all([outbox.enqueue("sess-a", samplePayload("sess-a", i)), outbox.enqueue("sess-b", samplePayload("sess-b", i))]);
  }
  await outbox.idle();
  assertStrictOrder(h.receiver.requests, "sess-a", 3);
  assertStrictOrder(h.receiver.requests, "sess-b", 3);
  assert.ok(h.receiver.requests.every((r) => r.signatureValid), "every signature verifies");
  // One webhook-id per event, reused by every retry of it.
  const idsByEvent = new Map<string, Set<string>>();
  for (const r of h.receiver.requests) {
    const key = `${r.sessionId}#${indexOf(r.body)}`;
    idsByEvent.set(key, (idsByEvent.get(key) ?? new Set()).add(r.webhookId));
  }
  assert.equal(idsByEvent.size, 6);
  for (const ids of idsByEvent.values()) assert.equal(ids.size, 1);
  assert.equal(new Set(h.receiver.requests.map((r) => r.webhookId)).size, 6);
  assert.ok(h.receiver.requests.length > 6, "some attempts were retried");
  const accepted = h.receiver.requests.find((r) => r.answered === 204);
  assert.deepEqual(accepted?.body, samplePayload(accepted?.sessionId ?? "", indexOf(accepted?.body ?? {})));
  assert.deepEqual(await pendingFiles(h.dir), []);
});

test("a receiver that never answers session A does not delay session B or the caller", async (t) => {
  const h = await harness(t, (r) => (r.sessionId === "sess-a" ? "hang" : 200));
  const outbox = h.outbox({ attemptTimeoutMs: 60_000 });
  await outbox.start();
  await outbox.enqueue("sess-a", samplePayload("sess-a", 0));
  await outbox.enqueue("sess-a", samplePayload("sess-a", 1));
  await h.receiver.waitFor((r) => r.sessionId === "sess-a");
  for (let i = 0; i < 3; i++) await outbox.enqueue("sess-b", samplePayload("sess-b", i));
  await h.receiver.waitFor((r) => r.sessionId === "sess-b" && indexOf(r.body) === 2);
  assertStrictOrder(h.receiver.requests, "sess-b", 3);
  assert.deepEqual(
    h.receiver.requests.filter((r) => r.sessionId === "sess-a").map((r) => indexOf(r.body)),
    [0],
    "A's second event waits behind its first",
  );
  // close() aborts the hanging request; A's events stay on disk for the next start.
  await outbox.close();
  assert.equal((await pendingFiles(h.dir)).filter((n) => n.startsWith("sess-a.")).length, 2);
});

test("after close() a new outbox on the same directory delivers with the same webhook-ids", async (t) => {
  let accepting = false;
  const h = await harness(t, () => (accepting ? 200 : 503));
  const first = h.outbox();
  // Enqueued before start: durable on disk all the same.
  for (let i = 0; i < 3; i++) await first.enqueue("sess-a", samplePayload("sess-a", i));
  assert.equal((await pendingFiles(h.dir)).length, 3);
  await first.start();
  await h.receiver.waitFor(() => h.receiver.requests.length >= 2);
  await first.close();
  const idBefore = h.receiver.requests[0]?.webhookId;

  accepting = true;
  const second = h.outbox();
  await second.start();
  await second.enqueue("sess-a", samplePayload("sess-a", 3));
  await second.idle();
  const accepted = h.receiver.requests.filter((r) => r.answered === 200);
  assert.deepEqual(accepted.map((r) => indexOf(r.body)), [0, 1, 2, 3]);
  assert.equal(accepted[0]?.webhookId, idBefore);
  assertStrictOrder(h.receiver.requests, "sess-a", 4);
  assert.deepEqual(await pendingFiles(h.dir), []);
});

test("an event older than maxAge moves to dead-letter with an error log", async (t) => {
  const h = await harness(t, () => 503);
  let offset = 0;
  const outbox = h.outbox({ now: () => Date.now() + offset });
  await outbox.start();
  await outbox.enqueue("sess-a", samplePayload("sess-a", 0));
  await outbox.enqueue("sess-a", samplePayload("sess-a", 1));
  const firstAttempt = await h.receiver.waitFor(() => true);
  offset = 25 * 60 * 60 * 1000; // a day and an hour later
  await outbox.idle();
  assert.deepEqual(await pendingFiles(h.dir), []);
  const dead = (await readdir(join(h.dir, DEAD_LETTER_DIR))).sort();
  assert.equal(dead.length, 2);
  assert.ok(dead[0]?.includes(firstAttempt.webhookId));
  const errors = h.logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((l) => l.level === 50);
  assert.equal(errors.length, 2);
  assert.equal(errors[0]?.webhook_id, firstAttempt.webhookId);
  assert.equal(errors[0]?.session_id, "sess-a");
  assert.equal(errors[0]?.event, "status_changed");
});

test("enqueue refuses payloads that break the contract", async (t) => {
  const h = await harness(t);
  const outbox = h.outbox();
  await assert.rejects(outbox.enqueue("../etc", samplePayload("../etc", 0)));
  await assert.rejects(outbox.enqueue("sess-a", samplePayload("sess-b", 0)));
  await assert.rejects(outbox.enqueue("sess-a", { ...samplePayload("sess-a", 0), status: "bogus" } as never));
  await outbox.close();
  await assert.rejects(outbox.enqueue("sess-a", samplePayload("sess-a", 0)));
});
