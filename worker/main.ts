/**
 * One meeting worker, forked by the control plane over IPC (shared/ipc/messages.ts): waits for
 * `init`, runs the session (worker/session/run.ts), answers `finished`, exits. A warm worker of
 * the pool gets `warm` first and starts PulseAudio and Chromium before its meeting is known
 * (worker/session/warm.ts). Every child it starts (PulseAudio, ffmpeg, Chromium) runs in its own
 * process group and is gone before exit.
 */
import { createLogger } from "../shared/log/logger.ts";
import { attachChannel } from "./session/channel.ts";
import { runSession } from "./session/run.ts";
import { startWarm, type Prepared, type WarmWorker } from "./session/warm.ts";

let warm: WarmWorker | undefined;
const attached = await attachChannel({
  onWarm: (message, send) => {
    warm = startWarm(message, send, createLogger({ level: message.logLevel, base: { warm_id: message.sessionId } }));
  },
  onWarmEnd: () => void warm?.end().then(() => process.exit(0)),
});
if (!attached.ok) {
  if (warm) {
    // Disconnected while warm: onWarmEnd closes the media and exits.
    await warm.end();
    process.exit(0);
  }
  const logger = createLogger({ base: { component: "worker" } });
  logger.error({ reason: attached.message }, "worker init failed");
  if (process.connected && process.send) {
    await new Promise<void>((resolve) => process.send?.({ type: "initFailed", message: attached.message }, undefined, {}, () => resolve()));
  }
  process.exit(1);
}

const { init, channel } = attached;
const logger = createLogger({ level: init.logLevel, base: { session_id: init.sessionId } });
let prepared: Prepared | undefined;
if (warm) {
  const adopted = await warm.adopt();
  // A failed warm-up has already told the supervisor (initFailed) and is exiting.
  if (!adopted) await new Promise(() => undefined);
  prepared = adopted ?? undefined;
}
let code = 1;
try {
  code = await runSession(init, channel, logger, prepared);
} catch (err) {
  // runSession handles every expected end; this is a bug, and the supervisor sees a non-zero exit.
  logger.fatal({ err }, "worker failed");
}
process.exit(code);
