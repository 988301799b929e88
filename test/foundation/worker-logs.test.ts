/**
 * Logs keep their meaning (issue 13): a worker's warnings and errors keep their level when the
 * control plane re-logs them (a real forked child through forkWorker), so they still show at
 * LOG_LEVEL=warn, and `err.code` survives the redaction list while second-factor codes do not.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { describe, test } from "node:test";
import { forkWorker } from "../../control/bot/supervisor/worker-process.ts";
import { createLogger } from "../../shared/log/logger.ts";
import { captureLogs } from "../harness/logs.ts";
import { PassThrough } from "node:stream";

const CHILD = fileURLToPath(new URL("./fixtures/log-child.ts", import.meta.url));

interface Line {
  level: number;
  msg: string;
  worker_pid?: number;
  session_id?: string;
  step?: number;
  stream?: string;
  err?: { message: string; code?: string };
}

async function relayAt(level: string): Promise<Line[] & { raw: string[] }> {
  const logs = captureLogs(level);
  const parent = logs.logger.child({ session_id: "00000000-0000-4000-8000-000000000001" });
  await new Promise<void>((resolve) => {
    forkWorker({
      modulePath: CHILD,
      execArgv: ["--import", "tsx"],
      sessionId: "00000000-0000-4000-8000-000000000001",
      marker: "log-child-test",
      logger: parent,
      onMessage: () => undefined,
      onExit: () => resolve(),
      onHung: () => undefined,
    });
  });
  // stdout may deliver its last lines just after 'exit'.
  await new Promise((r) => setTimeout(r, 200));
  return Object.assign(
    logs.lines.map((l) => JSON.parse(l) as Line),
    { raw: logs.lines },
  );
}

describe("worker log relay", () => {
  test("at warn: the worker's warning and error keep their levels and fields; info lines stay out", async () => {
    const lines = await relayAt("warn");
    const warn = lines.find((l) => l.msg === "worker warning line");
    const error = lines.find((l) => l.msg === "worker error line");
    assert.equal(warn?.level, 40, JSON.stringify(lines));
    assert.equal(warn?.step, 2);
    assert.equal(error?.level, 50);
    assert.equal(error?.err?.message, "disk full");
    assert.equal(error?.err?.code, "ENOSPC");
    assert.ok(typeof error?.worker_pid === "number");
    assert.ok(!lines.some((l) => l.msg === "worker info line"));
    assert.ok(lines.some((l) => l.msg === "stderr text" && l.level === 40));
  });

  test("at info: info lines keep level 30, plain text is kept, no field is written twice", async () => {
    const lines = await relayAt("info");
    const info = lines.find((l) => l.msg === "worker info line");
    assert.equal(info?.level, 30);
    assert.equal(info?.step, 1);
    assert.ok(lines.some((l) => l.msg === "plain text from a library" && l.level === 30));
    const raw = lines.raw.find((l) => l.includes("worker info line"))!;
    assert.equal(raw.split('"session_id"').length, 2, raw);
    assert.equal(raw.split('"pid"').length, 2, raw);
  });
});

describe("redaction", () => {
  test("err.code is kept; second-factor codes and other secrets are blanked", () => {
    const stream = new PassThrough();
    let text = "";
    stream.on("data", (c: Buffer) => (text += c.toString("utf8")));
    const logger = createLogger({ level: "info", destination: stream });
    logger.warn(
      { err: Object.assign(new Error("refused"), { code: "ECONNREFUSED" }), req: { body: { code: "123456" } }, body: { recoveryCode: "ABCD-EFGH" }, x: { token: "tok-secret" } },
      "a failure",
    );
    logger.error({ code: "permanent" }, "a storage failure names its code at the top level");
    const [first, second] = text.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal((first!.err as { code: string }).code, "ECONNREFUSED");
    assert.ok(!text.includes("123456") && !text.includes("ABCD-EFGH") && !text.includes("tok-secret"), text);
    assert.equal(second!.code, "permanent");
  });
});
