import { test } from "node:test";
import assert from "node:assert/strict";
import { Webhook } from "standardwebhooks";
import { createSigner } from "../../control/webhooks/deliver.ts";
import { fullJitterDelay } from "../../control/webhooks/backoff.ts";

test("a raw secret signs with its UTF-8 bytes, a whsec_ secret with its base64 key", () => {
  const body = JSON.stringify({ a: 1 });
  const at = new Date();
  const headers = (signature: string) => ({
    "webhook-id": "msg_1",
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": signature,
  });
  const raw = "plain-shared-secret";
  const rawVerifier = new Webhook(new Uint8Array(Buffer.from(raw, "utf8")), { format: "raw" });
  assert.deepEqual(rawVerifier.verify(body, headers(createSigner(raw).sign("msg_1", at, body))), { a: 1 });
  const standard = `whsec_${Buffer.from("0123456789abcdef0123456789abcdef").toString("base64")}`;
  assert.deepEqual(new Webhook(standard).verify(body, headers(createSigner(standard).sign("msg_1", at, body))), { a: 1 });
});

test("full jitter stays within [0, min(max, min * 2^attempt))", () => {
  assert.equal(fullJitterDelay(0, 100, 1000, () => 0), 0);
  assert.equal(fullJitterDelay(0, 100, 1000, () => 0.999), 99);
  assert.equal(fullJitterDelay(3, 100, 1000, () => 0.5), 400);
  assert.equal(fullJitterDelay(10, 100, 1000, () => 0.5), 500);
  assert.equal(fullJitterDelay(5000, 100, 1000, () => 0.5), 500);
});
