/**
 * A full-duplex audio bridge in one script: it listens to the meeting live (WebSocket, 20 ms
 * frames of 48 kHz mono s16le) and speaks back through the ingest stream (a chunked PUT of
 * headerless s16le at 48 kHz mono, paced in real time). What it does with them is the simplest
 * thing that shows both directions: a parrot. Each utterance it hears (sound after quiet, ending
 * in 0.8 s of quiet) is played back into the meeting, and every event is printed.
 *
 *   BASE_URL=http://localhost:8000 BOT_ACCESS_TOKEN=... SESSION_ID=... \
 *     node --import tsx examples/duplex.ts
 *
 * Needs a session in the call and MIC_PLAYBACK_ENABLED on (for the speaking half). Replace
 * `onUtterance` with speech recognition, a translator or a voice agent: the plumbing stays.
 */
import { request } from "node:http";
import { request as requestTls } from "node:https";
import { WebSocket } from "ws";

const BASE_URL = (process.env.BASE_URL ?? "http://localhost:8000").replace(/\/+$/, "");
const SESSION_ID = process.env.SESSION_ID ?? "";
const RATE = 48_000;
/** 20 ms of 48 kHz mono s16le: the listener's frames, and the pace of what we send. */
const FRAME_BYTES = (RATE / 50) * 2;
const LOUD_RMS = 0.02;
const QUIET_FRAMES_TO_END = 40; // 0.8 s
const MIN_UTTERANCE_FRAMES = 15; // 0.3 s

if (!SESSION_ID) throw new Error("set SESSION_ID (and BASE_URL, BOT_ACCESS_TOKEN)");

async function api(method: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (process.env.BOT_ACCESS_TOKEN) headers.authorization = `Bearer ${process.env.BOT_ACCESS_TOKEN}`;
  const res = await fetch(`${BASE_URL}${path}`, { method, headers, body: JSON.stringify(body) });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

// --- speaking: one long PUT to the ingest URL, fed a 20 ms frame every 20 ms (silence when idle).
const stream = await api("POST", `/audio/${SESSION_ID}/stream`, { format: "s16le" });
const ingestUrl = new URL(String(stream.ingest_url));
const put = (ingestUrl.protocol === "https:" ? requestTls : request)(ingestUrl, { method: "PUT", headers: { "content-type": "application/octet-stream" } });
put.on("response", (res) => console.log(`ingest ended: HTTP ${res.statusCode}`));
put.on("error", (err) => console.error("ingest failed:", err.message));
const toSay: Buffer[] = [];
const started = performance.now();
let sent = 0;
const speak = () => {
  // Real time against the wall clock, so what we say is heard now, not queued behind silence.
  while (sent * 20 <= performance.now() - started) {
    put.write(toSay.shift() ?? Buffer.alloc(FRAME_BYTES));
    sent++;
  }
};
const speaker = setInterval(speak, 10);

// --- listening: the WebSocket; binary frames are audio, text frames are JSON events.
const listener = await api("POST", `/audio/${SESSION_ID}/listen`, { sample_rate: RATE, channels: 1, events: true });
const ws = new WebSocket(String(listener.listen_url));
let utterance: Buffer[] = [];
let quiet = 0;

function rms(frame: Buffer): number {
  let sum = 0;
  for (let i = 0; i + 1 < frame.length; i += 2) sum += (frame.readInt16LE(i) / 32768) ** 2;
  return Math.sqrt(sum / (frame.length / 2));
}

/** Called with each utterance heard (48 kHz mono s16le frames). The parrot says it back. */
function onUtterance(frames: Buffer[]): void {
  console.log(`heard ${(frames.length * 0.02).toFixed(1)} s; saying it back`);
  toSay.push(...frames);
}

ws.on("message", (data: Buffer, isBinary: boolean) => {
  if (!isBinary) {
    // {type: "status" | "speech_started" | "speech_stopped" | "participant_joined" |
    //  "participant_left" | "overrun", ...}
    console.log("event:", data.toString());
    return;
  }
  const loud = rms(data) >= LOUD_RMS;
  if (loud || utterance.length > 0) utterance.push(data);
  quiet = loud ? 0 : quiet + 1;
  if (utterance.length > 0 && quiet >= QUIET_FRAMES_TO_END) {
    const spoken = utterance.slice(0, utterance.length - quiet);
    utterance = [];
    if (spoken.length >= MIN_UTTERANCE_FRAMES) onUtterance(spoken);
  }
});
ws.on("close", (code, reason) => {
  // 1000: the session ended (or the listener was deleted); 1008: we fell 5 s behind (the same
  // listen_url may connect again).
  console.log(`listener closed: ${code} ${reason.toString()}`);
  clearInterval(speaker);
  put.end();
});
// Ctrl-C: hand the listener and the stream back (a session has four listeners and one stream;
// each lives until the session ends or it is deleted), which closes the socket and the PUT.
process.once("SIGINT", () => {
  const release = (path: string) =>
    api("DELETE", path, undefined).catch((err: unknown) => console.error(`could not release ${path.split("/")[3]}:`, err instanceof Error ? err.message : err));
  void Promise.all([release(`/audio/${SESSION_ID}/listen/${String(listener.token)}`), release(`/audio/${SESSION_ID}/stream`)]).finally(() => ws.close());
});
