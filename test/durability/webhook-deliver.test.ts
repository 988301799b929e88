/**
 * One delivery attempt (control/webhooks/deliver.ts, Node's fetch) against real HTTP servers:
 * the signed POST arrives with its headers and body; only a 2xx counts; a redirect is an answer,
 * never followed; a refused connection, a receiver that never answers and an abort come back as
 * short error codes, never as a throw.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { Webhook } from "standardwebhooks";
import { attemptDelivery, createSigner } from "../../control/webhooks/deliver.ts";
import { newStoredEvent } from "../../control/webhooks/store.ts";
import type { WebhookPayload } from "../../control/webhooks/index.ts";

const SECRET = `whsec_${Buffer.from("0123456789abcdef0123456789abcdef").toString("base64")}`;
const event = newStoredEvent("session-1", 1, Date.now(), { event: "finished", session_id: "session-1" } as unknown as WebhookPayload);

async function serve(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<{ url: string; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8").on("data", (c: string) => (body += c));
    req.on("end", () => {
      hits.push(req.url ?? "");
      handler(req, res, body);
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

const options = (url: string, signal = new AbortController().signal, timeoutMs = 5_000) => ({ url, signer: createSigner(SECRET), timeoutMs, signal });

test("a 2xx is delivered, signed so the reference library verifies it", async (t) => {
  let seen: { headers: IncomingMessage["headers"]; body: string } | undefined;
  const receiver = await serve((req, res, body) => {
    seen = { headers: req.headers, body };
    res.writeHead(204).end();
  });
  t.after(() => receiver.close());
  assert.deepEqual(await attemptDelivery(event, options(`${receiver.url}/hook`)), { ok: true, status: 204 });
  assert.ok(seen);
  assert.equal(seen.headers["content-type"], "application/json");
  assert.equal(seen.headers["webhook-id"], event.webhook_id);
  assert.deepEqual(JSON.parse(seen.body), event.payload);
  const verified = new Webhook(SECRET).verify(seen.body, {
    "webhook-id": String(seen.headers["webhook-id"]),
    "webhook-timestamp": String(seen.headers["webhook-timestamp"]),
    "webhook-signature": String(seen.headers["webhook-signature"]),
  });
  assert.deepEqual(verified, event.payload);
});

test("a 500 and a redirect are failures with their status; the redirect is not followed", async (t) => {
  const receiver = await serve((req, res) => {
    if (req.url === "/moved") res.writeHead(302, { location: "/target" }).end();
    else if (req.url === "/target") res.writeHead(200).end("ok");
    else res.writeHead(500).end("no");
  });
  t.after(() => receiver.close());
  assert.deepEqual(await attemptDelivery(event, options(`${receiver.url}/broken`)), { ok: false, status: 500 });
  assert.deepEqual(await attemptDelivery(event, options(`${receiver.url}/moved`)), { ok: false, status: 302 });
  assert.deepEqual(receiver.hits, ["/broken", "/moved"]);
});

test("refused, timed out and aborted attempts answer a short code", async (t) => {
  const gone = await serve(() => undefined);
  await gone.close();
  assert.deepEqual(await attemptDelivery(event, options(gone.url)), { ok: false, error: "ECONNREFUSED" });

  const silent = await serve(() => undefined);
  t.after(() => silent.close());
  assert.deepEqual(await attemptDelivery(event, options(silent.url, undefined, 300)), { ok: false, error: "ETIMEDOUT" });

  const abort = new AbortController();
  const attempt = attemptDelivery(event, options(silent.url, abort.signal));
  setTimeout(() => abort.abort(), 100);
  assert.deepEqual(await attempt, { ok: false, error: "AbortError" });
});
