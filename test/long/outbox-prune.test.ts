/**
 * Issue #15 "Nothing grows without bound": the webhook outbox keeps per-session state in memory
 * only while that session has events in flight. 200 sessions' events delivered: nothing tracked;
 * a session that sends again later is delivered in order like any other.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { createWebhookOutbox } from "../../control/webhooks/index.ts";
import { createLogger } from "../../shared/log/logger.ts";
import { indexOf, samplePayload } from "../durability/fixtures/payloads.ts";
import { startReceiver } from "../durability/fixtures/webhook-receiver.ts";

test("drained sessions leave nothing in the outbox's memory", { timeout: 60_000 }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "i15-outbox-"));
  const receiver = await startReceiver(null);
  const outbox = createWebhookOutbox({ dir, url: receiver.url, logger: createLogger({ level: "silent" }), minBackoffMs: 5, maxBackoffMs: 40 });
  t.after(async () => {
    await outbox.close();
    await receiver.close();
    await rm(dir, { recursive: true, force: true });
  });
  await outbox.start();
  const ids = Array.from({ length: 200 }, () => randomUUID());
  for (const id of ids) {
    await outbox.enqueue(id, samplePayload(id, 0));
    await outbox.enqueue(id, samplePayload(id, 1));
  }
  await outbox.idle();
  // The pumps' last step (forgetting the session) runs right after the last delivery settles.
  await new Promise((r) => setImmediate(r));
  assert.equal(receiver.requests.length, 400);
  assert.equal(outbox.trackedSessions(), 0);
  assert.deepEqual((await readdir(dir)).filter((n) => n.endsWith(".json")), []);

  const again = ids[0] ?? "";
  await outbox.enqueue(again, samplePayload(again, 2));
  await outbox.enqueue(again, samplePayload(again, 3));
  await outbox.idle();
  const mine = receiver.requests.filter((r) => r.sessionId === again).map((r) => indexOf(r.body));
  assert.deepEqual(mine, [0, 1, 2, 3]);
});
