/**
 * Shared parts of the live-listen suites: a WebSocket consumer that keeps every frame (with its
 * arrival time) and event, opened through the public API or on a URL, and measurements on received PCM: the tone's frequency from its zero
 * crossings, the longest quiet run (a gap in what was heard), and the RMS.
 */
import assert from "node:assert/strict";
import type { TestContext } from "node:test";
import { WebSocket } from "ws";
import { startBotApp, waitForSession, type BotApp } from "../bot/fixtures/bot-app.ts";
import { startTeamsFixture, type FixtureMeeting } from "../fixture/teams/server.ts";

export type Json = Record<string, unknown>;

export interface Received {
  ws: WebSocket;
  frames: Buffer[];
  /** Epoch ms (sub-millisecond) of each binary frame's arrival. */
  arrivals: number[];
  events: Json[];
  /** Order of everything received: "a" for audio, or the event's type. */
  order: string[];
  closed: Promise<{ code: number; reason: string }>;
  opened: Promise<void>;
}

/** Connects and records; `ws.pause()` makes it a consumer that stopped reading. */
export function listen(url: string): Received {
  const ws = new WebSocket(url);
  const r: Received = {
    ws,
    frames: [],
    arrivals: [],
    events: [],
    order: [],
    closed: new Promise((resolve) => ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() }))),
    opened: new Promise((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.once("error", reject);
    }),
  };
  ws.on("message", (data: Buffer, isBinary: boolean) => {
    if (isBinary) {
      // A copy of its own: a frame ws hands over may be a view of a larger socket read, and kept
      // frames must hold only their bytes (the memory checks count the process's ArrayBuffers).
      const own = new Uint8Array(data);
      r.frames.push(Buffer.from(own.buffer, own.byteOffset, own.byteLength));
      r.arrivals.push(performance.timeOrigin + performance.now());
      r.order.push("a");
    } else {
      const event = JSON.parse(data.toString("utf8")) as Json;
      r.events.push(event);
      r.order.push(String(event.type));
    }
  });
  r.closed.catch(() => undefined);
  r.opened.catch(() => undefined);
  return r;
}

export type Listener = Received & { token: string; url: string };

/**
 * Opens a listener through the public API (`POST /audio/{id}/listen`, then its `listen_url`),
 * terminated when `context` ends; resolves once the WebSocket is open.
 */
export async function openListener(app: BotApp, sessionId: string, body: Json, context: Pick<TestContext, "after">): Promise<Listener> {
  const res = await app.request("POST", `/audio/${sessionId}/listen`, { body });
  assert.equal(res.status, 200, res.text);
  const b = res.body as Json;
  const r = listen(String(b.listen_url));
  context.after(() => r.ws.terminate());
  await r.opened;
  return { ...r, token: String(b.token), url: String(b.listen_url) };
}

/**
 * A bot with the real worker (and `bot` settings) in a fixture meeting that plays a tone at
 * `toneHz`, recording and in the call; everything goes when `context` ends.
 */
export async function toneSession(context: TestContext, o: { toneHz: number; displayName: string; bot?: Json }): Promise<{ app: BotApp; meeting: FixtureMeeting; id: string }> {
  const fixture = await startTeamsFixture();
  context.after(() => fixture.close());
  const app = await startBotApp(context, { worker: "real", bot: { MEETING_ALLOWED_HOSTS: fixture.hostPort, ...o.bot } });
  const meeting = fixture.createMeeting({ lobby: false, tone: { frequency: o.toneHz } });
  const join = await app.request("POST", "/join", { body: { meeting_url: meeting.joinUrl, display_name: o.displayName } });
  assert.equal(join.status, 200, join.text);
  const id = String(((join.body as Json).session as Json).session_id);
  await waitForSession(app, id, (s) => s.status === "recording", 120_000);
  await meeting.waitForPhase("in_call");
  return { app, meeting, id };
}

/** Samples of channel `ch` of interleaved s16le. */
export function channel(pcm: Buffer, channels: number, ch = 0): Int16Array {
  const all = new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.length - (pcm.length % 2)));
  if (channels === 1) return all;
  const out = new Int16Array(Math.floor(all.length / channels));
  for (let i = 0; i < out.length; i++) out[i] = all[i * channels + ch] ?? 0;
  return out;
}

/** Samples as floats in [-1, 1), for the analysis helpers. */
export const float = (s: Int16Array): Float32Array => Float32Array.from(s, (v) => v / 32768);

/** A pure tone's frequency from its zero crossings (exact enough for a sine over seconds). */
export function toneHz(samples: Int16Array, rate: number): number {
  let crossings = 0;
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1] ?? 0;
    const b = samples[i] ?? 0;
    if ((a < 0 && b >= 0) || (a >= 0 && b < 0)) crossings++;
  }
  return crossings / 2 / (samples.length / rate);
}

export function rms(samples: Int16Array): number {
  let sum = 0;
  for (const v of samples) sum += (v / 32768) ** 2;
  return Math.sqrt(sum / Math.max(1, samples.length));
}

/** The longest run, in ms, of windows of 5 ms whose RMS is below `level` (a gap in the tone). */
export function longestQuietMs(samples: Int16Array, rate: number, level = 0.01): number {
  const win = Math.round(rate * 0.005);
  let run = 0;
  let longest = 0;
  for (let i = 0; i + win <= samples.length; i += win) {
    if (rms(samples.subarray(i, i + win)) < level) run += 5;
    else run = 0;
    longest = Math.max(longest, run);
  }
  return longest;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitFor<T>(what: string, probe: () => T | undefined | false, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/**
 * Onsets of tone bursts in received PCM: sample indexes where 5 ms windows turn loud (RMS over
 * `level`) after at least `quietMs` of quiet, refined to the first sample over half that level.
 */
export function burstOnsets(samples: Int16Array, rate: number, { level = 0.05, quietMs = 100 } = {}): number[] {
  const win = Math.round(rate * 0.005);
  const onsets: number[] = [];
  let quiet = 0;
  for (let i = 0; i + win <= samples.length; i += win) {
    const loud = rms(samples.subarray(i, i + win)) >= level;
    if (loud && quiet * 5 >= quietMs) {
      let at = i;
      while (at < i + win && Math.abs((samples[at] ?? 0) / 32768) < level / 2) at++;
      onsets.push(at);
    }
    quiet = loud ? 0 : quiet + 1;
  }
  return onsets;
}
