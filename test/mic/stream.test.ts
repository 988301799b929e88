/**
 * Live streams through the real API and worker: opened with an ingest URL, pushed by the tools an
 * audio producer would use (`ffmpeg -method PUT`, `curl -T -` chunked, headerless s16le), heard by
 * the fixture page; a long push as fast as possible takes about the audio's duration (back-pressure
 * instead of buffering) with the server's RSS flat — raw PCM too, paced by the worker's jitter
 * buffer, which also plays the sound a stalled producer delivers late; DELETE ends the push and
 * kills the URL.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { closeSync, openSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { request } from "node:http";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Cleanups, sleep, startMicSession, switchedTone, waitHeard, type MicSession } from "./helpers.ts";
import { holdMediaLock } from "../harness/media-lock.ts";

// A full collection on demand, to read what the process really holds (not V8's free headroom).
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts).
await holdMediaLock();

type Json = Record<string, unknown>;

interface Pushed {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs a producer (curl, ffmpeg) to the end; `stdinFile` is fed as its stdin. */
function run(command: string, args: string[], stdinFile?: string): Promise<Pushed> {
  const started = performance.now();
  const fd = stdinFile ? openSync(stdinFile, "r") : "ignore";
  const child = spawn(command, args, { stdio: [fd, "pipe", "pipe"] });
  if (typeof fd === "number") closeSync(fd);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr, ms: performance.now() - started })));
}

describe("live stream (real worker, sqlite)", { timeout: 600_000, concurrency: false }, () => {
  let s: MicSession;
  const cleanups = new Cleanups();
  after(() => cleanups.run());
  let tone = "";
  let long = "";
  let raw = "";
  const LONG_SECONDS = 25;
  before(async () => {
    s = await startMicSession(cleanups.context);
    tone = await switchedTone(join(s.mediaDir, "tone.wav"), 5);
    // Stereo 96 kHz float: 768 KB a second (19 MB in all), so holding the body would show plainly.
    long = await switchedTone(join(s.mediaDir, "long.wav"), LONG_SECONDS);
    await run("sox", [long, "-r", "96000", "-c", "2", "-e", "floating-point", "-b", "32", join(s.mediaDir, "long96.wav")]);
    long = join(s.mediaDir, "long96.wav");
    raw = join(s.mediaDir, "tone.s16le");
    await run("sox", [tone, "-t", "raw", "-e", "signed", "-b", "16", "-r", "48000", "-c", "1", raw]);
  });

  const open = async (body: Json = {}): Promise<{ url: string; token: string; body: Json }> => {
    const res = await s.api("POST", `/audio/${s.id}/stream`, { body });
    assert.equal(res.status, 200, res.text);
    const b = res.body as Json;
    return { url: String(b.ingest_url), token: String(b.token), body: b };
  };
  const close = async () => assert.equal((await s.api("DELETE", `/audio/${s.id}/stream`)).status, 200);

  test("open: the ingest URL carries a 256-bit token; one stream per session", async () => {
    const { url, token, body } = await open();
    assert.equal(url, `${s.app.url}/audio/${s.id}/ingest/${token}`);
    assert.match(token, /^[A-Za-z0-9_-]{43,}$/);
    assert.equal(body.session_id, s.id);
    assert.equal(body.format, "auto");
    const second = await s.api("POST", `/audio/${s.id}/stream`, { body: {} });
    assert.equal(second.status, 409);
    assert.equal(typeof (second.body as Json).detail, "string");
    await close();
  });

  test("ffmpeg -re … -f wav -method PUT <url> plays into the meeting", async () => {
    const { url } = await open();
    const since = Date.now();
    const pushed = await run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-re", "-i", tone, "-f", "wav", "-method", "PUT", url]);
    assert.equal(pushed.code, 0, pushed.stderr);
    await waitHeard(s.meeting, since);
    await close();
  });

  test("a container stream is heard from its first second (ffmpeg -re … -f mp3 -method PUT)", async () => {
    // One second of 800 Hz, then quiet: an mp3's 32 kB probe is two seconds of it, which the
    // player once threw away with the analysis (`-fflags nobuffer`): nothing of it was heard.
    const lead = join(s.mediaDir, "lead.wav");
    await run("sox", ["-n", "-r", "48000", "-c", "1", "-b", "16", lead, "synth", "1", "sine", "800", "vol", "0.5", "pad", "0", "1.5"]);
    const { url } = await open();
    const since = Date.now();
    const pushed = await run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-re", "-i", lead, "-c:a", "libmp3lame", "-f", "mp3", "-method", "PUT", url]);
    assert.equal(pushed.code, 0, pushed.stderr);
    await waitHeard(s.meeting, since, { hz: 800, count: 4 });
    await close();
  });

  test("curl -T - (chunked) plays; the answer counts every byte", async () => {
    const { url } = await open();
    const since = Date.now();
    const pushed = await run("curl", ["-sS", "-f", "-T", "-", url], tone);
    assert.equal(pushed.code, 0, pushed.stderr);
    const answer = JSON.parse(pushed.stdout) as Json;
    assert.equal(answer.bytes_received, statSync(tone).size);
    await waitHeard(s.meeting, since);
    await close();
  });

  test("headerless PCM with format s16le", async () => {
    const { url, body } = await open({ format: "s16le" });
    assert.equal(body.format, "s16le");
    const since = Date.now();
    const pushed = await run("curl", ["-sS", "-f", "-T", "-", url], raw);
    assert.equal(pushed.code, 0, pushed.stderr);
    await waitHeard(s.meeting, since);
    await close();
  });

  test("a long file pushed as fast as possible takes about its duration; memory stays flat", async () => {
    const { url } = await open();
    // What the process holds after a full GC (heap + buffers), not its RSS: V8 grows its young
    // generation with the allocation rate, which moved the RSS by up to 11 MB with nothing held.
    const held = (): number => {
      collectGarbage();
      const m = process.memoryUsage();
      return m.heapUsed + m.arrayBuffers;
    };
    const rss: number[] = [];
    const baseline = held();
    const sampler = setInterval(() => rss.push(held()), 200);
    const pushed = await run("curl", ["-sS", "-f", "-T", long, url]);
    clearInterval(sampler);
    assert.equal(pushed.code, 0, pushed.stderr);
    const growthMb = (Math.max(...rss) - baseline) / 2 ** 20;
    console.log(`long push: ${(pushed.ms / 1000).toFixed(1)} s for ${LONG_SECONDS} s of audio; memory held grew ${growthMb.toFixed(1)} MB`);
    assert.ok(pushed.ms >= 0.7 * LONG_SECONDS * 1000, `took ${pushed.ms} ms`);
    // The body is 19 MB: holding a quarter of it would show.
    assert.ok(growthMb < 5, `memory held grew ${growthMb} MB`);
    await close();
  });

  test("raw s16le pushed as fast as possible is paced to about its duration by the jitter buffer", async () => {
    const { url } = await open({ format: "s16le" });
    const rawLong = join(s.mediaDir, "long.s16le");
    await run("sox", [long, "-t", "raw", "-e", "signed", "-b", "16", "-r", "48000", "-c", "1", rawLong]);
    const since = Date.now();
    const pushed = await run("curl", ["-sS", "-f", "-T", rawLong, url]);
    assert.equal(pushed.code, 0, pushed.stderr);
    assert.equal((JSON.parse(pushed.stdout) as Json).bytes_received, statSync(rawLong).size);
    console.log(`raw push: ${(pushed.ms / 1000).toFixed(1)} s for ${LONG_SECONDS} s of audio`);
    // Nothing of a fast push is dropped (no stall): the switched tone is heard all along.
    assert.ok(pushed.ms >= 0.7 * LONG_SECONDS * 1000, `took ${pushed.ms} ms`);
    await waitHeard(s.meeting, since, { count: 10 });
    await close();
  });

  test("a raw live stream that stalls and then delivers its backlog at once still plays its sound", async () => {
    const { url } = await open({ format: "s16le" });
    const put = request(url, { method: "PUT", headers: { "content-type": "application/octet-stream" } });
    const answered = new Promise<number>((resolve) => put.on("response", (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }));
    // Half a second live, a stall of 1.5 s, then the 1.5 s the producer held back plus a tone.
    for (let i = 0; i < 25; i++) {
      put.write(Buffer.alloc(96 * 20));
      await sleep(20);
    }
    await sleep(1500);
    const since = Date.now();
    put.write(Buffer.alloc(96 * 1500));
    const toneRaw = await readFile(raw);
    put.end(toneRaw);
    assert.equal(await answered, 200);
    await waitHeard(s.meeting, since);
    await close();
  });

  test("DELETE ends an ongoing push and the URL stops working (404); wrong tokens 404", async () => {
    const { url, token } = await open();
    const pushing = run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-re", "-i", long, "-f", "wav", "-method", "PUT", url]);
    await waitHeard(s.meeting, Date.now());
    const closedAt = Date.now();
    await close();
    const ended = await pushing;
    assert.ok(Date.now() - closedAt < 10_000, "the push ended with the stream");
    assert.ok(ended.ms < 20_000, `push ran ${ended.ms} ms`);
    const dead = await fetch(url, { method: "PUT", body: "abc" });
    assert.equal(dead.status, 404);
    assert.equal(typeof ((await dead.json()) as Json).detail, "string");
    await open();
    const old = await fetch(url, { method: "PUT", body: "abc" });
    assert.equal(old.status, 404, "a reopened stream has a new token");
    const wrong = await fetch(`${s.app.url}/audio/${s.id}/ingest/${token.slice(0, -2)}xx`, { method: "PUT", body: "abc" });
    assert.equal(wrong.status, 404);
    await close();
    await sleep(200);
  });
});
