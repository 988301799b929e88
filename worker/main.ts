/**
 * One meeting worker, forked by the control plane over IPC (shared/ipc/messages.ts): waits for
 * `init`, runs the session (worker/session/run.ts), answers `finished`, exits. Every child it
 * starts (PulseAudio, ffmpeg, Chromium) runs in its own process group and is gone before exit.
 */
import { createLogger } from "../shared/log/logger.ts";
import { attachChannel } from "./session/channel.ts";
import { runSession } from "./session/run.ts";

const attached = await attachChannel();
if (!attached.ok) {
  const logger = createLogger({ base: { component: "worker" } });
  logger.error({ reason: attached.message }, "worker init failed");
  if (process.connected && process.send) {
    await new Promise<void>((resolve) => process.send?.({ type: "initFailed", message: attached.message }, undefined, {}, () => resolve()));
  }
  process.exit(1);
}

const { init, channel } = attached;
const logger = createLogger({ level: init.logLevel, base: { session_id: init.sessionId } });
let code = 1;
try {
  code = await runSession(init, channel, logger);
} catch (err) {
  // runSession handles every expected end; this is a bug, and the supervisor sees a non-zero exit.
  logger.fatal({ err }, "worker failed");
}
process.exit(code);
