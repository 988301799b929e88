/**
 * The bot's whole path through the HTTP API of a service running elsewhere (another process,
 * a container): join a fixture meeting, be admitted from the lobby, record `seconds` of its tone,
 * stop, and answer the final session.
 */
import type { FixtureMeeting } from "../fixture/teams/server.ts";

type Json = Record<string, unknown>;

export interface RecordOptions {
  url: string;
  token: string;
  meeting: FixtureMeeting;
  seconds: number;
  /** Called once the session records (e.g. to look at its worker). */
  whileRecording?: (sessionId: string) => Promise<void>;
}

export async function recordTone(options: RecordOptions): Promise<Json> {
  const api = async (method: string, path: string, body?: unknown): Promise<Json> => {
    const res = await fetch(`${options.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${options.token}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = (await res.json()) as Json;
    if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const until = async (id: string, statuses: string[], timeoutMs: number): Promise<Json> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const s = await api("GET", `/status/${id}`);
      if (statuses.includes(String(s.status))) return s;
      if (Date.now() > deadline) throw new Error(`session ${id} still ${String(s.status)} after ${timeoutMs} ms: ${JSON.stringify(s)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const joined = await api("POST", "/join", { meeting_url: options.meeting.joinUrl, display_name: "Release Check", reference: "release-check" });
  const id = String((joined.session as Json).session_id);
  const lobby = await until(id, ["lobby", "recording", "stopped", "error", "interrupted"], 180_000);
  if (lobby.status !== "lobby") throw new Error(`expected the lobby, got ${JSON.stringify(lobby)}`);
  options.meeting.admit();
  await until(id, ["recording"], 60_000);
  await options.whileRecording?.(id);
  await new Promise((r) => setTimeout(r, options.seconds * 1000));
  await api("POST", `/stop/${id}`);
  return until(id, ["stopped", "error", "interrupted"], 60_000);
}
