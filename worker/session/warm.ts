/**
 * A warm worker (control/bot/warm-pool/): PulseAudio and Chromium on a blank page with a fresh
 * profile, started before any meeting is known, so that `init` only has to start ffmpeg and open
 * the meeting (and ffmpeg opens at once: record-primer.ts). Used by one session, never by a second one: the worker exits when it ends.
 * Until `init`, a crash of either process ends the worker (the pool starts a fresh one).
 */
import { mkdir, rm } from "node:fs/promises";
import type { FromWorker, WarmMessage } from "../../shared/ipc/messages.ts";
import type { Logger } from "../../shared/log/logger.ts";
import { killProcessGroup } from "../../shared/process/group.ts";
import { startPulse, type PulseDaemon } from "../audio/pulse.ts";
import { primeRecordSource, type RecordPrimer } from "../audio/record-primer.ts";
import { launchBrowser, loadPlaywright, type BrowserHandle } from "../browser/launch.ts";
import { inTurn, launchTurn } from "./launch-turn.ts";

export interface Prepared {
  workDir: string;
  pulse: PulseDaemon;
  browser: BrowserHandle;
  /** Keeps the recording sink's clock short until the session's recorder is open (record-primer.ts). */
  primer: RecordPrimer;
}

export interface WarmWorker {
  /** The session takes the media (crashes are its business from now on); null when warming failed. */
  adopt(): Promise<Prepared | null>;
  /** Closes what was started and removes the folder; for a stop or disconnect before `init`. */
  end(): Promise<void>;
}

function firstLine(err: unknown): string {
  const e = err as Error;
  const cause = e.cause instanceof Error ? `: ${e.cause.message.split("\n")[0]}` : "";
  return `${e.message.split("\n")[0]}${cause}`;
}

export function startWarm(message: WarmMessage, send: (m: FromWorker) => Promise<boolean>, logger: Logger): WarmWorker {
  const { workDir, mic } = message;
  let adopted = false;
  let ending: Promise<void> | undefined;
  const pids: number[] = [];
  // Last resort if the worker exits before close (children live in their own groups).
  const killOnExit = () => pids.forEach((pid) => killProcessGroup(pid));
  process.once("exit", killOnExit);

  const prepared: Promise<Prepared> = (async () => {
    const playwright = loadPlaywright();
    await mkdir(workDir, { recursive: true, mode: 0o700 });
    let pulse: PulseDaemon;
    try {
      pulse = await startPulse({ dir: workDir, logger, mic });
    } catch (err) {
      throw new Error(`PulseAudio failed to start: ${firstLine(err)}`, { cause: err });
    }
    pids.push(pulse.pid);
    let browser: BrowserHandle;
    try {
      await playwright;
      browser = await inTurn(
        () => launchTurn(send, logger),
        () => launchBrowser({ dir: workDir, pulseEnv: pulse.env, logger, mic, executablePath: message.chromiumPath }),
      );
    } catch (err) {
      await pulse.stop().catch(() => undefined);
      throw new Error(`Chromium failed to launch: ${firstLine(err)}`, { cause: err });
    }
    pids.push(browser.pid);
    return { workDir, pulse, browser, primer: primeRecordSource({ pulseEnv: pulse.env, source: pulse.recMonitor, logger }) };
  })();

  const end = (): Promise<void> => {
    ending ??= (async () => {
      const p = await prepared.catch(() => null);
      await p?.primer.stop();
      await p?.browser.close().catch((err: unknown) => logger.error({ err }, "closing Chromium failed"));
      await p?.pulse.stop().catch((err: unknown) => logger.error({ err }, "stopping PulseAudio failed"));
      process.removeListener("exit", killOnExit);
      await rm(workDir, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
    })();
    return ending;
  };

  void prepared.then(
    async (p) => {
      if (ending) return;
      logger.info({ pids: { pulseaudio: p.pulse.pid, chromium: p.browser.pid }, launchMs: Math.round(p.browser.launchMs) }, "warm worker ready");
      await send({ type: "warmed", pids: { pulseaudio: p.pulse.pid, chromium: p.browser.pid } });
      const crashed = (what: string) => {
        if (adopted || ending) return;
        logger.error({ what }, "a warm worker's process died before its meeting; exiting");
        void end().then(() => process.exit(1));
      };
      void p.browser.closed.then(({ expected }) => !expected && crashed("chromium"));
      void p.pulse.exited.then(() => crashed("pulseaudio"));
    },
    async (err: unknown) => {
      logger.error({ err }, "warm worker could not start");
      await send({ type: "initFailed", message: firstLine(err) });
      await end();
      process.exit(1);
    },
  );

  return {
    async adopt() {
      const p = await prepared.catch(() => null);
      if (p && !ending) {
        adopted = true;
        process.removeListener("exit", killOnExit);
        return p;
      }
      return null;
    },
    end,
  };
}
