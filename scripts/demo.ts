/**
 * `make demo`: the whole path offline on a fresh machine. Starts the local Teams fixture and the
 * service (in this process, on free ports, SQLite in a temp folder), sends a bot through the HTTP
 * API, admits it from the lobby, records ten seconds of the fixture's 440 Hz tone, stops it, and
 * prints the stored file and its dominant frequency.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBotFeature } from "../control/bot/feature.ts";
import { parseConfig } from "../control/config/index.ts";
import { startServer } from "../control/server.ts";
import { createLogger } from "../shared/log/logger.ts";
import { startTeamsFixture } from "../test/fixture/teams/server.ts";
import { hear } from "../test/bot/fixtures/media.ts";

const RECORD_SECONDS = 10;
const TOKEN = "demo-token";

const dir = mkdtempSync(join(tmpdir(), "toamaisutaa-demo-"));
const fixture = await startTeamsFixture();
const config = parseConfig({
  server: { PORT: 0, HOST: "127.0.0.1", DATABASE_URL: `file:${join(dir, "app.db")}`, LOG_LEVEL: "warn" },
  LocalLogin: { Enabled: false },
  bot: { RECORDINGS_DIR: join(dir, "recordings"), MEETING_ALLOWED_HOSTS: fixture.hostPort, BOT_ACCESS_TOKEN: TOKEN, MEETING_WAIT_FOR_LOBBY: 2 },
});
const server = await startServer(config, createLogger({ level: "warn" }), { features: [createBotFeature({ storage: { backend: "local" } })] });
const say = (line: string): void => console.log(`[demo] ${line}`);

async function api(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function until(id: string, statuses: string[], timeoutMs = 120_000): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await api("GET", `/status/${id}`);
    if (statuses.includes(String(s.status))) return s;
    if (Date.now() > deadline) throw new Error(`session stuck in ${String(s.status)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

let code = 0;
try {
  say(`service ${server.url}, Teams fixture ${fixture.url}, files in ${dir}`);
  const meeting = fixture.createMeeting({ lobby: true, tone: { frequency: 440 } });
  const joined = await api("POST", "/join", { meeting_url: meeting.joinUrl, display_name: "Demo Recorder", reference: "demo" });
  const id = String((joined.session as Record<string, unknown>).session_id);
  say(`POST /join → session ${id} (${String(joined.message)})`);
  const lobby = await until(id, ["lobby", "recording", "error", "interrupted"]);
  if (lobby.status !== "lobby") throw new Error(`expected the lobby, got ${JSON.stringify(lobby)}`);
  say("the bot waits in the lobby; admitting it");
  meeting.admit();
  await until(id, ["recording"]);
  say(`recording for ${RECORD_SECONDS} s`);
  await new Promise((r) => setTimeout(r, RECORD_SECONDS * 1000));
  await api("POST", `/stop/${id}`);
  const done = await until(id, ["stopped", "error", "interrupted"]);
  if (done.status !== "stopped") throw new Error(`session ended ${JSON.stringify(done)}`);
  const heard = await hear(String(done.recording_file));
  say(`status ${String(done.status)} (${String(done.end_reason)}), ${String(done.recording_bytes)} bytes, ${heard.durationSec.toFixed(2)} s`);
  console.log(`recording: ${String(done.recording_file)}`);
  console.log(`dominant frequency: ${heard.frequency} Hz (the fixture plays 440 Hz)`);
} catch (error) {
  console.error(`[demo] failed: ${error instanceof Error ? error.message : String(error)}`);
  code = 1;
} finally {
  await server.stop({ graceMs: 5_000 });
  await fixture.close();
}
process.exit(code);
