/**
 * Issue #16: a browser that always speaks English. The service runs with a German host locale
 * (LANG=de_DE.UTF-8, LANGUAGE=de, LC_ALL=de_DE.UTF-8) against the fixture's light page, which
 * renders German to a browser that does not ask for English (with Debian's chromium-l10n, an
 * unpinned Chromium there does render German: checked first, or the test would prove nothing).
 * The bot joins, records, leaves as in English; an operator's live screenshot works meanwhile.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { chromium } from "playwright-core";
import { startTeamsFixture } from "../fixture/teams/server.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { startBotApp, waitForSession } from "./fixtures/bot-app.ts";
import { decodePng } from "./fixtures/evidence.ts";
import { hear } from "./fixtures/media.ts";

await holdMediaLock();

type Json = Record<string, unknown>;
const GERMAN = { LANG: "de_DE.UTF-8", LANGUAGE: "de", LC_ALL: "de_DE.UTF-8", LC_MESSAGES: "de_DE.UTF-8" };
// The whole service (control plane and the workers it forks) runs with the German host locale.
Object.assign(process.env, GERMAN);

describe("German host", { timeout: 600_000, concurrency: false }, () => {
  test("an unpinned Chromium on this host gets the German page (the fixture and chromium-l10n work)", async (t) => {
    const fixture = await startTeamsFixture();
    t.after(() => fixture.close());
    const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: ["--no-sandbox"], env: { ...process.env, ...GERMAN } });
    t.after(() => browser.close());
    const meeting = fixture.createMeeting({ light: true, loadingMs: 500 });
    const page = await browser.newPage();
    await page.goto(meeting.joinUrls.meet);
    await page.locator('button[data-tid="joinOnWeb"]').click();
    await meeting.waitForPhase("prejoin", 30_000);
    assert.equal(meeting.state().language, "de", `navigator.language ${await page.evaluate("navigator.language")}`);
    await page.locator("text=Jetzt teilnehmen").waitFor({ timeout: 10_000 });
  });

  test("the bot joins (dialog after Join now), records and leaves as in English", async (t) => {
    const fixture = await startTeamsFixture();
    t.after(() => fixture.close());
    const app = await startBotApp(t, { worker: "real", bot: { MEETING_ALLOWED_HOSTS: fixture.hostPort } });
    const meeting = fixture.createMeeting({ light: true, lobby: true, tone: { frequency: 523 }, participants: 2 });
    const res = await app.request("POST", "/join", { body: { meeting_url: meeting.joinUrls.meetupJoin, display_name: "Protokoll Bot" } });
    assert.equal(res.status, 200, res.text);
    const id = String(((res.body as Json).session as Json).session_id);
    // A look at the bot while it starts: 409 saying the browser is still starting (not a word of
    // audio or microphones), then a picture once its page is open.
    const refusals: string[] = [];
    for (let shot = await app.request("POST", `/sessions/${id}/evidence`); shot.status !== 200; shot = await app.request("POST", `/sessions/${id}/evidence`)) {
      assert.equal(shot.status, 409, shot.text);
      refusals.push(String((shot.body as Json).detail));
      assert.ok(refusals.length < 600, "no capture within two minutes");
      await new Promise((r) => setTimeout(r, 200));
    }
    for (const detail of refusals) assert.match(detail, /starting/i, detail);
    await waitForSession(app, id, (s) => s.status === "lobby", 120_000);
    assert.equal(meeting.state().language, "en", "the pinned browser asked for English");
    await meeting.waitForPhase("lobby");
    meeting.admit();
    await waitForSession(app, id, (s) => s.status === "recording", 60_000);

    // An operator looks at the live bot.
    const shot = await app.request("POST", `/sessions/${id}/evidence`);
    assert.equal(shot.status, 200, shot.text);
    const name = String((shot.body as Json).name);
    assert.match(name, /^live-.*\.png$/);
    const file = await fetch(`${app.url}/sessions/${id}/evidence/${name}`);
    assert.equal(file.headers.get("content-type"), "image/png");
    assert.deepEqual(await decodePng(Buffer.from(await file.arrayBuffer())), { width: 1280, height: 720 });

    await new Promise((r) => setTimeout(r, 4000));
    meeting.setParticipants(1);
    const done = await waitForSession(app, id, (s) => s.status === "stopped", 60_000);
    assert.equal(done.end_reason, "alone");
    assert.equal(meeting.state().phase, "left", "the bot pressed Leave (call-end)");
    const heard = await hear(String(done.recording_file));
    assert.ok(heard.durationSec > 3, `duration ${heard.durationSec}`);
    assert.ok(Math.abs(heard.frequency - 523) <= 10, `frequency ${heard.frequency}`);
    const list = await app.request("GET", `/sessions/${id}/evidence`);
    const names = (list.body as { files: Array<{ name: string }> }).files.map((f) => f.name);
    assert.ok(names.includes("steps.json") && names.includes(name), names.join(", "));
  });
});
