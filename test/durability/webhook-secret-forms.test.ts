/**
 * WEBHOOK_SECRET is read as the Standard Webhooks reference library reads it (decisions.md:
 * "signed per the Standard Webhooks specification"): a receiver that verifies with
 * `new Webhook(WEBHOOK_SECRET)` accepts our signature whether or not the secret carries `whsec_`.
 * Sent through the real outbox to a real HTTP receiver.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { Webhook } from "standardwebhooks";
import { createWebhookOutbox } from "../../control/webhooks/index.ts";
import { createLogger } from "../../shared/log/logger.ts";

async function deliverOnce(secret: string): Promise<{ body: string; headers: IncomingHttpHeaders }> {
  let resolve!: (v: { body: string; headers: IncomingHttpHeaders }) => void;
  const got = new Promise<{ body: string; headers: IncomingHttpHeaders }>((r) => (resolve = r));
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      res.writeHead(204).end();
      resolve({ body: Buffer.concat(chunks).toString("utf8"), headers: req.headers });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const dir = mkdtempSync(join(tmpdir(), "wh-secret-"));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const outbox = createWebhookOutbox({ dir, url, secret, logger: createLogger({ level: "silent" }) });
  try {
    await outbox.start();
    await outbox.enqueue("s1", {
      event: "finished", session_id: "s1", reference: "r", status: "stopped", previous_status: "recording",
      end_reason: "alone", recording_file: null, error_message: null, timestamp: new Date().toISOString(),
    });
    return await got;
  } finally {
    await outbox.close();
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  }
}

const verify = (secret: string, d: { body: string; headers: IncomingHttpHeaders }): unknown =>
  new Webhook(secret).verify(d.body, d.headers as Record<string, string>);

test("a base64 secret without whsec_ verifies with the reference library", async () => {
  const secret = randomBytes(24).toString("base64");
  const delivered = await deliverOnce(secret);
  assert.equal((verify(secret, delivered) as { session_id: string }).session_id, "s1");
});

test("a whsec_ secret verifies with the reference library", async () => {
  const secret = `whsec_${randomBytes(24).toString("base64")}`;
  assert.equal((verify(secret, await deliverOnce(secret)) as { event: string }).event, "finished");
});

test("a secret that is not base64 signs with its UTF-8 bytes", async () => {
  const secret = "my-shared-secret";
  const delivered = await deliverOnce(secret);
  const raw = new Webhook(new Uint8Array(Buffer.from(secret, "utf8")), { format: "raw" });
  assert.equal((raw.verify(delivered.body, delivered.headers as Record<string, string>) as { event: string }).event, "finished");
});

test("a whsec_ secret pasted with whitespace around it verifies against the secret itself", async () => {
  const secret = `whsec_${randomBytes(24).toString("base64")}`;
  const delivered = await deliverOnce(` ${secret}\n`);
  assert.equal((verify(secret, delivered) as { event: string }).event, "finished");
});
