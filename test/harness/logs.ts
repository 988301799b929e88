/**
 * A logger whose every line is kept, so suites can assert that no secret ever reached a log
 * line. Set TEST_LOG=1 to also print the lines.
 */
import { Writable } from "node:stream";
import { createLogger, type Logger } from "../../shared/log/logger.ts";

export interface CapturedLogs {
  logger: Logger;
  lines: string[];
  /** Lines that contain any of the given secrets. */
  leaks(secrets: Iterable<string>): string[];
}

export function captureLogs(level = process.env.TEST_LOG_LEVEL ?? "debug"): CapturedLogs {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (line === "") continue;
        lines.push(line);
        if (process.env.TEST_LOG === "1") process.stderr.write(`${line}\n`);
      }
      done();
    },
  });
  return {
    logger: createLogger({ level, destination }),
    lines,
    leaks(secrets) {
      const list = [...secrets].filter((s) => s.length >= 6);
      return lines.filter((l) => list.some((s) => l.includes(s)));
    },
  };
}
