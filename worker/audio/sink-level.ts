/**
 * How loud the recording's sink is, block by block: a `parec` of the sink's monitor at 8 kHz
 * mono, read four times a second. For the page tap's check against the sink while it serves
 * (../listen/page-tap/cross-check.ts) and the meeting's silence (../session/silence.ts).
 *
 * PulseAudio hands a record stream every block the sink renders, whatever fragment the stream
 * asked for: while the sink is paced at 20 ms (../sink-pacer.ts) that is 50 writes a second,
 * and a pipe read as a stream woke this process as often (~1 % of a core). So parec writes into
 * a FIFO the worker reads without waiting, on a timer: four wake-ups a second, whatever the
 * sink's pace; the FIFO's 64 KiB hold 4 s of it.
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { closeSync, constants, openSync, readSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "../../shared/log/logger.ts";
import { spawnChild, type Child } from "../../shared/process/child.ts";
import { parecArgs, parecEnv } from "./parec.ts";

const RATE = 8000;
export const LEVEL_BLOCK_MS = 250;
const BLOCK_BYTES = (RATE * 2 * LEVEL_BLOCK_MS) / 1000;
/** Blocks kept: more than any window the check looks at. */
const KEEP_BLOCKS = 40;

export interface LevelBlock {
  /** When the block ended, about (performance.now()). */
  at: number;
  /** Its RMS level, dBFS (-Infinity for digital silence). */
  dbfs: number;
}

export interface SinkLevel {
  readonly pid: number;
  /** The blocks read in the last `ms`, oldest first. */
  blocksWithin(ms: number, now?: number): LevelBlock[];
  stop(): Promise<void>;
}

/** The RMS level of s16le samples, dBFS. */
export function rmsDbfs(pcm: Buffer): number {
  const samples = new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length >> 1);
  let sum = 0;
  for (let i = 0; i < samples.length; i++) {
    const v = samples[i]! / 32768;
    sum += v * v;
  }
  const rms = samples.length > 0 ? Math.sqrt(sum / samples.length) : 0;
  return rms > 0 ? 20 * Math.log10(rms) : -Infinity;
}

/** Both ends of a FIFO, its name already gone: the read end does not block. */
function fifo(): { read: number; write: number } {
  const path = join(tmpdir(), `toa-level-${randomUUID()}.fifo`);
  execFileSync("mkfifo", ["-m", "600", path]);
  try {
    const read = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    return { read, write: openSync(path, constants.O_WRONLY) };
  } finally {
    unlinkSync(path);
  }
}

export interface SinkLevelOptions {
  pulseEnv: Record<string, string>;
  source: string;
  logger: Logger;
  /** The parec's stream name (`pactl list`). */
  stream: string;
  /** Each block as it is read. */
  onBlock?: (block: LevelBlock) => void;
}

export function startSinkLevel(options: SinkLevelOptions): SinkLevel {
  const blocks: LevelBlock[] = [];
  const ends = fifo();
  let child: Child;
  try {
    child = spawnChild({
      command: "parec",
      args: parecArgs({ ...options, format: { sampleRate: RATE, channels: 1 }, fragmentMs: LEVEL_BLOCK_MS, client: "bot-level" }),
      env: parecEnv(options.pulseEnv),
      logger: options.logger,
      name: `parec-${options.stream}`,
      stdout: ends.write,
      killOnParentExit: true,
    });
  } catch (err) {
    closeSync(ends.read);
    throw err;
  } finally {
    closeSync(ends.write);
  }
  // Whole blocks only; what is left waits for the next read. 4 s of input at most per read.
  const input = Buffer.alloc(64 * 1024 + BLOCK_BYTES);
  let held = 0;
  const drain = () => {
    for (;;) {
      let n = 0;
      try {
        n = readSync(ends.read, input, held, input.length - held, null);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "EAGAIN") break;
        throw err;
      }
      if (n === 0) break;
      held += n;
      if (held === input.length) break;
    }
    const whole = Math.floor(held / BLOCK_BYTES);
    const now = performance.now();
    for (let k = 0; k < whole; k++) {
      const block = { at: now - (whole - 1 - k) * LEVEL_BLOCK_MS, dbfs: rmsDbfs(input.subarray(k * BLOCK_BYTES, (k + 1) * BLOCK_BYTES)) };
      blocks.push(block);
      options.onBlock?.(block);
    }
    if (blocks.length > KEEP_BLOCKS) blocks.splice(0, blocks.length - KEEP_BLOCKS);
    input.copy(input, 0, whole * BLOCK_BYTES, held);
    held -= whole * BLOCK_BYTES;
  };
  const timer = setInterval(() => {
    try {
      drain();
    } catch (err) {
      options.logger.debug({ err }, "sink level: read failed");
    }
  }, LEVEL_BLOCK_MS);
  timer.unref();
  let closed = false;
  return {
    pid: child.pid,
    blocksWithin(ms, now = performance.now()) {
      return blocks.filter((b) => b.at > now - ms);
    },
    async stop() {
      clearInterval(timer);
      await child.stop({ signal: "SIGTERM", timeoutMs: 2_000 });
      if (!closed) closeSync(ends.read);
      closed = true;
    },
  };
}
