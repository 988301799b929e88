/**
 * Forms multer gives up on (a second `file` part, too many fields, a body cut short) are the
 * client's mistake: 422 `{detail}` (or 400), nothing left in the uploads folder, and the service
 * goes on. Such a form once left `req.file` without a path, and deleting it threw out of a
 * `finish` listener: the control plane exited and took every bot's recording with it.
 */
import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { request } from "node:http";
import { join } from "node:path";
import { test } from "node:test";
import { sessionPaths } from "../../control/bot/paths.ts";
import { MEETING_URL, startBotApp, waitForSession } from "./fixtures/bot-app.ts";

type Json = Record<string, unknown>;
const WAV = new Uint8Array(4096);

/** A raw POST (fetch cannot send a body cut short); resolves with the status and body. */
function rawPost(url: string, contentType: string, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers: { "content-type": contentType, "content-length": body.length } }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (c: string) => (text += c)).on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

test("malformed upload forms: 4xx, nothing kept, the service and the session go on", async (t) => {
  const app = await startBotApp(t, { bot: { MIC_PLAYBACK_ENABLED: true } });
  const joined = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL } });
  const id = String(((joined.body as Json).session as Json).session_id);
  await waitForSession(app, id, (s) => s.status === "recording");
  const url = `${app.url}/audio/${id}/play/upload`;
  const uploads = join(sessionPaths(app.recordingsDir, id, "wav").workDir, "uploads");

  const two = new FormData();
  two.append("file", new Blob([WAV], { type: "audio/wav" }), "a.wav");
  two.append("file", new Blob([WAV], { type: "audio/wav" }), "b.wav");
  const many = new FormData();
  many.append("file", new Blob([WAV], { type: "audio/wav" }), "a.wav");
  for (let i = 0; i < 11; i++) many.append(`extra${i}`, "x");
  for (const [what, form] of [["two file parts", two], ["eleven fields after the file", many]] as const) {
    const res = await fetch(url, { method: "POST", body: form });
    const body = (await res.json()) as Json;
    assert.equal(res.status, 422, `${what}: ${JSON.stringify(body)}`);
    assert.ok(Array.isArray(body.detail), what);
  }

  const boundary = "----cut-short";
  const cut = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n${"x".repeat(2000)}`);
  const short = await rawPost(url, `multipart/form-data; boundary=${boundary}`, cut);
  assert.ok(short.status >= 400 && short.status < 500, `a body cut short: ${short.status} ${short.text}`);
  assert.equal(typeof (JSON.parse(short.text) as Json).detail === "string" || Array.isArray((JSON.parse(short.text) as Json).detail), true, short.text);

  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(await readdir(uploads).catch(() => []), [], "no refused upload kept");
  assert.equal((await app.request("GET", "/")).status, 200, "the service is still up");
  assert.equal(((await app.request("GET", `/status/${id}`)).body as Json).status, "recording", "the session goes on");
});
