/**
 * The worker's side of the turns to start Chromium (shared/ipc/messages.ts `launchTurn`): ask,
 * wait for `launchGo`, launch, say `done`. One Chromium per worker, so one turn per process.
 * A control plane that never answers (none there, an older one) must not hold a meeting back:
 * after WAIT_LIMIT_MS the worker starts anyway.
 */
import type { FromWorker } from "../../shared/ipc/messages.ts";
import type { Logger } from "../../shared/log/logger.ts";
import { within } from "../../shared/timeout.ts";

const WAIT_LIMIT_MS = 60_000;

let granted: (() => void) | null = null;

/** `launchGo` arrived (channel.ts). */
export function launchGo(): void {
  const go = granted;
  granted = null;
  go?.();
}

/**
 * Waits for this worker's turn; resolves to the function that ends it (call it once Chromium is
 * up or has failed; later calls do nothing).
 */
export async function launchTurn(send: (m: FromWorker) => Promise<boolean>, logger: Logger): Promise<() => void> {
  const asked = performance.now();
  const turn = new Promise<boolean>((resolve) => (granted = () => resolve(true)));
  if (!(await send({ type: "launchTurn", phase: "want" }))) granted?.();
  const inTurn = (await within(turn, WAIT_LIMIT_MS)) === true;
  granted = null;
  const waitedMs = Math.round(performance.now() - asked);
  if (!inTurn) logger.warn({ waited_ms: waitedMs }, "no turn to start the browser came; starting it anyway");
  else if (waitedMs > 1000) logger.info({ waited_ms: waitedMs }, "waited for a turn to start the browser");
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    void send({ type: "launchTurn", phase: "done" });
  };
}

/** `work` in this worker's turn to start Chromium, when there are turns. */
export async function inTurn<T>(turn: (() => Promise<() => void>) | undefined, work: () => Promise<T>): Promise<T> {
  const end = turn ? await turn() : null;
  try {
    return await work();
  } finally {
    end?.();
  }
}
