// A real crash: the process holding the outbox is SIGKILLed while a delivery is in flight. The
// next outbox on the same directory must deliver everything, and a receiver that deduplicates on
// webhook-id must see each event exactly once, in order per session.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createLogger } from "../../shared/log/logger.ts";
import { createWebhookOutbox } from "../../control/webhooks/index.ts";
import { startReceiver } from "./fixtures/webhook-receiver.ts";
import { indexOf } from "./fixtures/payloads.ts";

const SECRET = `whsec_${randomBytes(24).toString("base64")}`;
const CHILD = fileURLToPath(new URL("./fixtures/outbox-child.ts", import.meta.url));
const EVENTS_PER_SESSION = 3;

test("events survive a SIGKILL mid-delivery and reach a deduplicating receiver once", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), "outbox-crash-"));
  let childAlive = true;
  // The child's first two deliveries are accepted; the third hangs until the child dies.
  const receiver = await startReceiver(SECRET, (_r, index) => (childAlive && index >= 2 ? "hang" : 200));
  const child = spawn(process.execPath, ["--import", "tsx", CHILD, dir, receiver.url, SECRET, String(EVENTS_PER_SESSION)], {
    detached: true,
    stdio: ["ignore", "ignore", "inherit"],
  });
  const exited = once(child, "exit");
  const outbox = createWebhookOutbox({
    dir,
    url: receiver.url,
    secret: SECRET,
    logger: createLogger({ level: "silent" }),
    minBackoffMs: 5,
    maxBackoffMs: 40,
  });
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-(child.pid ?? 0), "SIGKILL");
    await exited;
    await outbox.close();
    await receiver.close();
    await rm(dir, { recursive: true, force: true });
  });

  const hung = await receiver.waitFor((r) => r.answered === null);
  process.kill(-(child.pid ?? 0), "SIGKILL");
  await exited;
  childAlive = false;

  await outbox.start();
  await outbox.idle();

  // Deduplicate on webhook-id the way a receiver should.
  const firstSeen = new Map<string, { sessionId: string; index: number }>();
  for (const r of receiver.requests) {
    assert.ok(r.signatureValid);
    if (r.answered === 200 && !firstSeen.has(r.webhookId)) firstSeen.set(r.webhookId, { sessionId: r.sessionId, index: indexOf(r.body) });
  }
  for (const sessionId of ["sess-a", "sess-b"]) {
    const order = [...firstSeen.values()].filter((e) => e.sessionId === sessionId).map((e) => e.index);
    assert.deepEqual(order, [0, 1, 2], `${sessionId} delivered once each, in order`);
  }
  assert.ok(firstSeen.has(hung.webhookId), "the event in flight at the crash kept its webhook-id");
  assert.deepEqual((await readdir(dir)).filter((n) => n.endsWith(".json") || n.startsWith(".tmp-")), []);
});
