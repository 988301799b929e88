/**
 * Request logging above info builds `req.log` lazily (control/http/request-logging.ts): an error
 * line must still carry the same request bindings pino-http gives it at info, with the path's
 * secrets redacted, and every response must still carry its X-Request-Id.
 */
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import { describe, test } from "node:test";
import express from "express";
import { requestLogging } from "../../control/http/request-logging.ts";
import { createLogger } from "../../shared/log/logger.ts";

interface Line {
  level: number;
  msg: string;
  req?: { id: string; method: string; url: string };
  err?: { message: string };
}

/** One request against an app whose route logs an error through `req.log`; answers the lines and the response id. */
async function errorLine(level: string): Promise<{ lines: Line[]; requestId: string | null }> {
  const stream = new PassThrough();
  const lines: Line[] = [];
  stream.on("data", (chunk: Buffer) => {
    for (const text of chunk.toString("utf8").split("\n")) if (text) lines.push(JSON.parse(text) as Line);
  });
  const app = express();
  app.use(requestLogging(createLogger({ level, destination: stream })));
  app.get("/ingest/:token", (req, res) => {
    req.log.error({ err: new Error("boom") }, "unhandled error");
    res.status(500).end();
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/ingest/secret-ingest-token?code=123`);
    await res.arrayBuffer();
    return { lines, requestId: res.headers.get("x-request-id") };
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

describe("request logging", () => {
  for (const level of ["info", "warn"]) {
    test(`at ${level}, an error line through req.log carries the request id, method and redacted path`, async () => {
      const { lines, requestId } = await errorLine(level);
      assert.match(requestId ?? "", /^[0-9a-f-]{36}$/);
      const line = lines.find((l) => l.msg === "unhandled error");
      assert.ok(line, "the error line is written");
      assert.deepEqual(line.req, { id: requestId, method: "GET", url: "/ingest/[redacted]?code=[redacted]" });
      assert.equal(line.err?.message, "boom");
      assert.ok(!JSON.stringify(lines).includes("secret-ingest-token"));
      // At info pino-http adds its completion line; above info nothing else is written.
      assert.equal(lines.filter((l) => l.msg !== "unhandled error").length, level === "info" ? 1 : 0);
    });
  }
});
