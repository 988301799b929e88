/**
 * The stop's request drain (control/http/drain.ts) on a real HTTP server: `quiet(ms)` waits for
 * a spell with nothing in flight and nothing arriving, so a keep-alive client sending its next
 * request right after the last answer is not taken for gone (closing its connection then would
 * reset a request the server never read).
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { createRequestDrain } from "../../control/http/drain.ts";

async function serve(delayMs: number): Promise<{ url: string; server: Server; drain: ReturnType<typeof createRequestDrain> }> {
  const drain = createRequestDrain();
  const server = createServer(drain.wrap((_req, res) => setTimeout(() => res.end("ok"), delayMs)));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, drain };
}

test("quiet() waits until no request has arrived for the whole spell, and answers carry Connection: close once draining", async (t) => {
  const { url, server, drain } = await serve(20);
  t.after(() => new Promise((resolve) => server.close(resolve)));

  await (await fetch(url)).text();
  drain.start();
  const quietMs = 300;
  let quietAt = 0;
  const quiet = drain.quiet(quietMs).then(() => (quietAt = performance.now()));
  // A client keeps sending, one request after the other, for a while after the drain began.
  const lastSent: number[] = [];
  const headers: (string | null)[] = [];
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    lastSent.push(performance.now());
    const res = await fetch(url);
    headers.push(res.headers.get("connection"));
    await res.text();
    assert.equal(quietAt, 0, `quiet() resolved while requests were still arriving (request ${i})`);
  }
  await quiet;
  assert.ok(quietAt - lastSent.at(-1)! >= quietMs, "quiet() resolved before a whole spell had passed since the last request");
  assert.deepEqual(headers, Array(5).fill("close"));
  assert.equal(drain.inFlight, 0);
});

test("quiet() and idle() resolve when no request ever came", { timeout: 10_000 }, async (t) => {
  const { server, drain } = await serve(0);
  t.after(() => new Promise((resolve) => server.close(resolve)));
  await drain.idle();
  await drain.quiet(60_000);
  assert.equal(drain.inFlight, 0);
});
