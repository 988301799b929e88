/**
 * Forwarding to a session's owner (control/cluster/forward.ts) over a kept-alive connection that
 * the owner closes just as the next request goes out (its idle timeout): the request is sent once
 * more on a new connection instead of answering 503. Real HTTP on both sides; the owner here drops
 * the second request of every connection without an answer, which is what that race looks like
 * from the forwarder (ECONNRESET on a reused socket, nothing processed).
 */
import assert from "node:assert/strict";
import { Agent as HttpAgent, createServer, type IncomingMessage, type Server } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { test } from "node:test";
import type { Request, Response } from "express";
import { forward, type ForwardOptions } from "../../control/cluster/forward.ts";
import { createLogger } from "../../shared/log/logger.ts";

const listen = async (server: Server): Promise<string> => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

test("a request on a kept-alive socket the owner just closed is sent again on a new connection", async (t) => {
  const perSocket = new Map<Socket, number>();
  const answered: string[] = [];
  const owner = createServer((req, res) => {
    const n = (perSocket.get(req.socket) ?? 0) + 1;
    perSocket.set(req.socket, n);
    if (n === 2) return void req.socket.destroy();
    answered.push(`${req.method} ${req.url}`);
    res.end("stopped");
  });
  const ownerUrl = await listen(owner);
  t.after(() => owner.close());

  const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  t.after(() => agents.http.destroy());
  const options = { instanceId: "front", secret: "s", logger: createLogger({ level: "silent" }) } as unknown as ForwardOptions;
  const failures: Error[] = [];
  const front = createServer((req: IncomingMessage, res) => {
    // As in the service: the owner is looked up first, by which time a bodiless request is complete.
    req.resume();
    req.once("end", () => forward(req as Request, res as unknown as Response, `${ownerUrl}${req.url}`, options, agents, (err) => {
      failures.push(err);
      res.statusCode = 503;
      res.end();
    }));
  });
  const frontUrl = await listen(front);
  t.after(() => front.close());

  for (const id of ["s1", "s2", "s3"]) {
    const res = await fetch(`${frontUrl}/stop/${id}`, { method: "POST" });
    assert.equal(res.status, 200, `POST /stop/${id}: ${failures.map((e) => e.message).join("; ")}`);
    assert.equal(await res.text(), "stopped");
  }
  assert.deepEqual(failures, []);
  assert.deepEqual(answered, ["POST /stop/s1", "POST /stop/s2", "POST /stop/s3"]);
  assert.ok([...perSocket.values()].some((n) => n === 2), "the owner dropped a request on a reused connection");
});
