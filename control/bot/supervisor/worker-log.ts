/**
 * A worker's stdout is pino JSON lines (shared/log). The control plane re-logs each one at the
 * worker's own level with its fields, so a worker's warning stays a warning (and still shows at
 * LOG_LEVEL=warn) and its `err` keeps its message, stack and code. A line that is not pino JSON
 * (a library printing to stdout) is logged as text at info; stderr lines as text at warn.
 */
import type { Logger } from "../../../shared/log/logger.ts";

const LEVELS: Record<number, "trace" | "debug" | "info" | "warn" | "error" | "fatal"> = {
  10: "trace",
  20: "debug",
  30: "info",
  40: "warn",
  50: "error",
  60: "fatal",
};

/** Fields pino writes itself or that the relaying logger already binds. */
const OWN_FIELDS = new Set(["level", "time", "pid", "hostname", "msg", "v"]);

export function relayWorkerLine(log: Logger, line: string): void {
  const parsed = parseLine(line);
  if (!parsed) {
    log.info({ stream: "stdout" }, line);
    return;
  }
  const level = LEVELS[parsed.level as number] ?? "info";
  const bound = log.bindings();
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(parsed)) if (!OWN_FIELDS.has(key) && !(key in bound)) fields[key] = value;
  log[level](fields, typeof parsed.msg === "string" ? parsed.msg : "");
}

function parseLine(line: string): Record<string, unknown> | null {
  if (!line.startsWith("{")) return null;
  try {
    const value: unknown = JSON.parse(line);
    if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
    return typeof (value as { level?: unknown }).level === "number" ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
