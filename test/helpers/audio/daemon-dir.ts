import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import type { Logger } from "../../../shared/log/logger.ts";
import { startPulse, type PulseDaemon } from "../../../worker/audio/pulse.ts";
import { cleanupStack, type Defer } from "./cleanup.ts";

export interface DaemonDir {
  dir: string;
  pulse: PulseDaemon;
  /** The test's cleanup stack: what is deferred here runs before the daemon stops and the dir goes. */
  defer: Defer;
}

/** A temporary worker dir with a PulseAudio daemon (no mic) in it, both gone after the test. */
export async function daemonInTempDir(t: TestContext, prefix: string, logger: Logger): Promise<DaemonDir> {
  const defer = cleanupStack(t);
  const dir = await mkdtemp(join(tmpdir(), prefix));
  defer(() => rm(dir, { recursive: true, force: true }));
  const pulse = await startPulse({ dir, logger, mic: false });
  defer(() => pulse.stop());
  return { dir, pulse, defer };
}
