/**
 * Attacks on the audio API. (1) Path escape: `play` names a file outside MEDIA_DIR by `..`, by an
 * absolute path, or through a symlink placed inside MEDIA_DIR (to a file, a folder, or dangling),
 * hoping the bot reads it out into the meeting: every one answers 400 and nothing plays; so does a
 * missing file under such a link (a 404 there would tell what exists outside). (2) The
 * ingest URL is a credential: a guessed, altered or closed token answers 404, the token never
 * reaches the log, and the API token is not needed (nor enough) for the PUT. (3) Races: several
 * stream opens at once yield exactly one stream; two PUTs at once, exactly one push.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, copyFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Cleanups, heardAt, levelsSince, sleep, startMicSession, switchedTone, waitHeard, type MicSession } from "./helpers.ts";
import { holdMediaLock } from "../harness/media-lock.ts";

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

type Json = Record<string, unknown>;
const API_TOKEN = "mic-security-api-token";

describe("audio API security (real worker, sqlite)", { timeout: 600_000, concurrency: false }, () => {
  let s: MicSession;
  let outside = "";
  const cleanups = new Cleanups();
  after(() => cleanups.run());
  const api = (method: string, path: string, body?: unknown) => s.api(method, path, { body, token: API_TOKEN });

  before(async () => {
    s = await startMicSession(cleanups.context, { BOT_ACCESS_TOKEN: API_TOKEN }, { token: API_TOKEN });
    outside = mkdtempSync(join(tmpdir(), "mic-outside-"));
    cleanups.context.after(() => rmSync(outside, { recursive: true, force: true }));
    const secret = await switchedTone(join(outside, "secret.wav"), 4);
    mkdirSync(join(s.mediaDir, "sub"));
    copyFileSync(secret, join(s.mediaDir, "sub", "inside.wav"));
    symlinkSync(secret, join(s.mediaDir, "link-file.wav"));
    symlinkSync(outside, join(s.mediaDir, "link-dir"));
    symlinkSync(join(outside, "missing.wav"), join(s.mediaDir, "dangling.wav"));
    symlinkSync(join(s.mediaDir, "sub", "inside.wav"), join(s.mediaDir, "link-inside.wav"));
    copyFileSync(secret, join(s.mediaDir, "..dots.wav"));
    writeFileSync(join(outside, "x"), "");
  });

  test("paths leaving MEDIA_DIR answer 400 and nothing is heard; a link staying inside plays", async () => {
    const since = Date.now();
    const escapes = ["../" + outside.split("/").pop() + "/secret.wav", join(outside, "secret.wav"), "sub/../../" + outside.split("/").pop() + "/secret.wav", "link-file.wav", "link-dir/secret.wav", "link-dir/no-such-file.wav", "link-dir/none/deeper.wav", "dangling.wav", "/etc/passwd", "sub/\0.wav"];
    const answers = await Promise.all(escapes.map((path) => api("POST", `/audio/${s.id}/play`, { path })));
    for (const [i, res] of answers.entries()) {
      assert.equal(res.status, 400, `${escapes[i]}: ${res.text}`);
      assert.equal(typeof (res.body as Json).detail, "string");
    }
    await sleep(2000);
    assert.deepEqual(heardAt(levelsSince(s.meeting, since)), []);
    const ok = await api("POST", `/audio/${s.id}/play`, { path: "link-inside.wav" });
    assert.equal(ok.status, 200, ok.text);
    await waitHeard(s.meeting, since);
    await api("POST", `/audio/${s.id}/stop`);
    // Only a `..` segment leaves MEDIA_DIR: a file whose name merely starts with two dots is inside.
    const dotsSince = Date.now();
    const dots = await api("POST", `/audio/${s.id}/play`, { path: "..dots.wav" });
    assert.equal(dots.status, 200, dots.text);
    await waitHeard(s.meeting, dotsSince);
    await api("POST", `/audio/${s.id}/stop`);
  });

  test("the audio routes need the API token; the ingest PUT needs only its own", async () => {
    assert.equal((await s.api("POST", `/audio/${s.id}/play`, { body: { path: "sub/inside.wav" } })).status, 401);
    assert.equal((await s.api("POST", `/audio/${s.id}/stream`, { body: {} })).status, 401);
    assert.equal((await s.api("DELETE", `/audio/${s.id}/stream`)).status, 401);
    assert.equal((await s.api("POST", `/audio/${s.id}/stop`)).status, 401);
    const opened = await api("POST", `/audio/${s.id}/stream`, {});
    const url = String((opened.body as Json).ingest_url);
    const token = String((opened.body as Json).token);
    // The API token in place of the ingest token opens nothing.
    const swapped = await fetch(`${s.app.url}/audio/${s.id}/ingest/${API_TOKEN}`, { method: "PUT", body: "x", headers: { authorization: `Bearer ${API_TOKEN}` } });
    assert.equal(swapped.status, 404);
    const flipped = token.slice(0, -1) + (token.endsWith("A") ? "B" : "A");
    assert.equal((await fetch(`${s.app.url}/audio/${s.id}/ingest/${flipped}`, { method: "PUT", body: "x" })).status, 404);
    const put = await runCurl(join(s.mediaDir, "sub", "inside.wav"), url);
    assert.equal(put, 0);
    assert.equal((await api("DELETE", `/audio/${s.id}/stream`)).status, 200);
    assert.equal((await fetch(url, { method: "PUT", body: "x" })).status, 404);
    assert.deepEqual(s.app.logs.lines.filter((l) => l.includes(token)), [], "the ingest token is never logged");
  });

  test("racing stream opens: exactly one 200, the rest 409", async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => api("POST", `/audio/${s.id}/stream`, {})));
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 409, 409, 409, 409, 409]);
    assert.equal((await api("DELETE", `/audio/${s.id}/stream`)).status, 200);
  });

  test("racing PUTs on one token: exactly one push, the other 409", async () => {
    const opened = await api("POST", `/audio/${s.id}/stream`, {});
    const url = String((opened.body as Json).ingest_url);
    const file = join(s.mediaDir, "sub", "inside.wav");
    const [a, b] = await Promise.all([runCurlStatus(file, url), runCurlStatus(file, url)]);
    assert.deepEqual([a, b].sort(), ["200", "409"]);
    assert.equal((await api("DELETE", `/audio/${s.id}/stream`)).status, 200);
  });
});

function runCurl(file: string, url: string): Promise<number | null> {
  return new Promise((resolve) => spawn("curl", ["-sS", "-f", "-o", "/dev/null", "-T", file, url]).once("close", resolve));
}

/** Rate-limited so that both requests are surely in flight at the same time. */
function runCurlStatus(file: string, url: string): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--limit-rate", "200k", "-T", file, url]);
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.once("close", () => resolve(out.trim()));
  });
}
