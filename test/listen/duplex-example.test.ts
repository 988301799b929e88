/**
 * The README's duplex example (examples/duplex.ts) run as a user would run it, against the real
 * service and worker: it hears the meeting's bursts of tone through the listen WebSocket and says
 * each back through the ingest stream, and the meeting (the fixture page's microphone analysis)
 * hears that tone coming from the bot. Stopped with Ctrl-C it hands its listener back; left to run,
 * it exits when the session ends.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { after, test } from "node:test";
import { startBotApp, waitForSession } from "../bot/fixtures/bot-app.ts";
import { startTeamsFixture } from "../fixture/teams/server.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { Cleanups, waitHeard } from "../mic/helpers.ts";
import { waitFor, type Json } from "./helpers.ts";

await holdMediaLock();

const EXAMPLE = fileURLToPath(new URL("../../examples/duplex.ts", import.meta.url));
const TOKEN = "duplex-example-token";

test("examples/duplex.ts: the meeting's words come back into the meeting", { timeout: 300_000 }, async () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());
  const fixture = await startTeamsFixture();
  cleanups.context.after(() => fixture.close());
  const app = await startBotApp(cleanups.context, { worker: "real", bot: { MEETING_ALLOWED_HOSTS: fixture.hostPort, MIC_PLAYBACK_ENABLED: true, BOT_ACCESS_TOKEN: TOKEN } });
  // "Utterances": 0.6 s of tone, then 1.4 s of quiet (the parrot answers after 0.8 s of quiet).
  const meeting = fixture.createMeeting({ lobby: false, tone: { frequency: 700, burst: { onMs: 600, offMs: 1400 } } });
  const join = await app.request("POST", "/join", { body: { meeting_url: meeting.joinUrl, display_name: "Parrot" }, token: TOKEN });
  const id = String(((join.body as Json).session as Json).session_id);
  await waitForSession(app, id, (s) => s.status === "recording", 120_000, TOKEN);
  await meeting.waitForPhase("in_call");

  const run = () => {
    const child = spawn(process.execPath, ["--import", "tsx", EXAMPLE], {
      env: { ...process.env, BASE_URL: app.url, BOT_ACCESS_TOKEN: TOKEN, SESSION_ID: id },
      stdio: ["ignore", "pipe", "pipe"],
    });
    cleanups.context.after(() => void child.kill("SIGKILL"));
    const r = { child, out: "", exited: new Promise<number | null>((resolve) => child.once("exit", resolve)) };
    child.stdout.on("data", (d: Buffer) => (r.out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (r.out += d.toString()));
    return r;
  };

  const first = run();
  const since = Date.now();
  await waitFor("the parrot to hear an utterance", () => /heard 0\.\d s; saying it back/.test(first.out), 60_000);
  assert.match(first.out, /event: \{"type":"status","status":"recording"\}/);
  // The bot said the meeting's 700 Hz back: the page's microphone hears it.
  await waitHeard(meeting, since, { hz: 700, count: 3, timeoutMs: 30_000 });

  // Ctrl-C gives its listener back: all four of the session's listeners are free again.
  first.child.kill("SIGINT");
  assert.equal(await first.exited, 0, first.out);
  assert.match(first.out, /listener closed: 1000 listener closed/);
  const tokens: string[] = [];
  for (let i = 0; i < 4; i++) {
    const res = await app.request("POST", `/audio/${id}/listen`, { body: {}, token: TOKEN });
    assert.equal(res.status, 200, `listener ${i + 1} of 4 after the example left: ${res.text}`);
    tokens.push(String((res.body as Json).token));
  }
  for (const t of tokens) assert.equal((await app.request("DELETE", `/audio/${id}/listen/${t}`, { token: TOKEN })).status, 200);

  // One that runs until the session ends exits by itself.
  const second = run();
  await waitFor("the second run to listen", () => /event: \{"type":"status","status":"recording"\}/.test(second.out), 60_000);
  assert.equal((await app.request("POST", `/stop/${id}`, { token: TOKEN })).status, 200);
  assert.equal(await second.exited, 0, second.out);
  assert.match(second.out, /listener closed: 1000 session ended/);
});
