/**
 * How loud the recording's sink is, block by block, for the page tap's cross-check
 * (cross-check.ts): a `parec` of the sink's monitor at 8 kHz mono with 250 ms fragments, so it
 * wakes four times a second and its blocks are a few kilobytes. It runs only while the page tap
 * serves someone.
 */
import type { Logger } from "../../../shared/log/logger.ts";
import { spawnChild, type Child } from "../../../shared/process/child.ts";
import { killProcessGroup } from "../../../shared/process/group.ts";
import { parecArgs, parecEnv } from "../../audio/parec.ts";

const RATE = 8000;
export const LEVEL_BLOCK_MS = 250;
const BLOCK_BYTES = (RATE * 2 * LEVEL_BLOCK_MS) / 1000;
/** Blocks kept: more than any window the check looks at. */
const KEEP_BLOCKS = 40;

export interface LevelBlock {
  /** When the block was read (performance.now()). */
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

export function startSinkLevel(options: { pulseEnv: Record<string, string>; source: string; logger: Logger }): SinkLevel {
  const blocks: LevelBlock[] = [];
  // A copy per block: a chunk's bytes may start at an odd offset of a pooled buffer.
  let pending: Buffer = Buffer.alloc(0);
  const child: Child = spawnChild({
    command: "parec",
    args: parecArgs({ ...options, format: { sampleRate: RATE, channels: 1 }, fragmentMs: LEVEL_BLOCK_MS, stream: "level", client: "bot-listen-check" }),
    env: parecEnv(options.pulseEnv),
    logger: options.logger,
    name: "parec-level",
    onStdoutData: (chunk) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length >= BLOCK_BYTES) {
        blocks.push({ at: performance.now(), dbfs: rmsDbfs(Buffer.from(pending.subarray(0, BLOCK_BYTES))) });
        pending = pending.subarray(BLOCK_BYTES);
        if (blocks.length > KEEP_BLOCKS) blocks.shift();
      }
    },
  });
  const killOnExit = () => killProcessGroup(child.pid);
  process.once("exit", killOnExit);
  void child.exited.then(() => process.removeListener("exit", killOnExit));
  return {
    pid: child.pid,
    blocksWithin(ms, now = performance.now()) {
      return blocks.filter((b) => b.at > now - ms);
    },
    async stop() {
      await child.stop({ signal: "SIGTERM", timeoutMs: 2_000 });
    },
  };
}
