/**
 * Shared set-up of the microphone suites: the Teams fixture, the real server with a real worker
 * and MIC_PLAYBACK_ENABLED, a temp MEDIA_DIR with test sounds, a bot in the call, and readers of
 * what the fixture page heard. Sounds are switched tones (on/off): a steady sine would be
 * suppressed by the browser's processing if anything left it on (media-pipeline.md).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { TestContext } from "node:test";
import type { RawTree } from "../../control/config/sources.ts";
import { startBotApp, waitForSession, type BotApp } from "../bot/fixtures/bot-app.ts";
import { startTeamsFixture, type FixtureMeeting, type MicLevel, type TeamsFixture } from "../fixture/teams/server.ts";

const execFileAsync = promisify(execFile);

/** The playback tone; the fixture's remote tone is 440 Hz, far enough to tell them apart. */
export const PLAY_HZ = 1000;
/** The page measures with a 4096-point FFT at 48 kHz: bins are ~11.7 Hz wide. */
export const HZ_TOLERANCE = 25;

/** Writes a switched tone (300 ms on, 200 ms off) of `seconds` to `path` as WAV, 48 kHz mono. */
export async function switchedTone(path: string, seconds: number, hz = PLAY_HZ, extraArgs: string[] = []): Promise<string> {
  const repeats = Math.max(0, Math.round(seconds / 0.5) - 1);
  await execFileAsync("sox", ["-n", "-r", "48000", "-c", "1", "-b", "16", ...extraArgs, path, "synth", "0.3", "sine", String(hz), "vol", "0.5", "pad", "0", "0.2", "repeat", String(repeats)]);
  return path;
}

export interface MicSession {
  fixture: TeamsFixture;
  app: BotApp;
  meeting: FixtureMeeting;
  id: string;
  mediaDir: string;
  /** POST/GET/DELETE helper for the bot API. */
  api: BotApp["request"];
}

/** Cleanups of a suite-wide set-up, run last-in first-out from an `after` hook. */
export class Cleanups {
  readonly #fns: (() => unknown)[] = [];
  /** Shaped like TestContext.after, so helpers written for a test also serve a `before` hook. */
  readonly context = { after: (fn: () => unknown) => void this.#fns.push(fn) } as unknown as TestContext;
  async run(): Promise<void> {
    for (const fn of this.#fns.splice(0).reverse()) await fn();
  }
}

export async function startMicSession(t: Pick<TestContext, "after">, bot: RawTree = {}, options: { join?: boolean; token?: string } = {}): Promise<MicSession> {
  const fixture = await startTeamsFixture();
  t.after(() => fixture.close());
  const mediaDir = mkdtempSync(join(tmpdir(), "mic-media-"));
  t.after(() => rmSync(mediaDir, { recursive: true, force: true }));
  const app = await startBotApp(t as TestContext, { worker: "real", bot: { MEETING_ALLOWED_HOSTS: fixture.hostPort, MIC_PLAYBACK_ENABLED: true, MEDIA_DIR: mediaDir, ...bot } });
  const meeting = fixture.createMeeting({ lobby: false, tone: { frequency: 440 } });
  let id = "";
  if (options.join !== false) {
    const join = await app.request("POST", "/join", { body: { meeting_url: meeting.joinUrl, display_name: "Mic Bot" }, token: options.token });
    if (join.status !== 200) throw new Error(`join failed: ${join.text}`);
    id = String(((join.body as Record<string, unknown>).session as Record<string, unknown>).session_id);
    await waitForSession(app, id, (s) => s.status === "recording" || s.status === "connected", 120_000, options.token);
    await meeting.waitForPhase("in_call");
  }
  return { fixture, app, meeting, id, mediaDir, api: app.request };
}

/** Levels the page reported after `since` (epoch ms). */
export function levelsSince(meeting: FixtureMeeting, since: number): MicLevel[] {
  return meeting.state().micLevels.filter((l) => l.at >= since);
}

export function heardAt(levels: MicLevel[], hz = PLAY_HZ): MicLevel[] {
  return levels.filter((l) => l.heard && l.frequency !== null && Math.abs(l.frequency - hz) <= HZ_TOLERANCE);
}

/** Waits until the page has heard `hz` at least `count` times after `since`; returns those levels. */
export async function waitHeard(meeting: FixtureMeeting, since: number, { hz = PLAY_HZ, count = 3, timeoutMs = 15_000 } = {}): Promise<MicLevel[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const heard = heardAt(levelsSince(meeting, since), hz);
    if (heard.length >= count) return heard;
    if (Date.now() > deadline) {
      const all = levelsSince(meeting, since);
      throw new Error(`the page heard ${hz} Hz ${heard.length} times in ${all.length} levels; last: ${JSON.stringify(all.slice(-5))}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
