/**
 * Issue #19 "Done means", end to end: three instances of control/main.ts on 127.0.0.1 (own ports,
 * own RECORDINGS_DIR, one fresh PostgreSQL database), MAX_CONCURRENT_SESSIONS 1 each, the real
 * worker (Chromium, PulseAudio, ffmpeg) against the Teams fixture.
 *
 * Three joins sent to one instance run on all three and a fourth is 503; one reference joined on
 * three instances at once is one bot; status, play, stop, a live ingest and a live listener
 * work through an instance that is not the owner; SIGKILL of every process of one instance
 * mid-recording makes its session `interrupted` (`instance_lost`) through the others,
 * new joins go to the survivors, and after its restart the recording is stored with exactly one
 * `finished` webhook; SIGTERM to an instance with a running session keeps it recording (readyz
 * 503, new joins elsewhere) until it is stopped, then the instance exits.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { startTeamsFixture, type FixtureMeeting } from "../fixture/teams/server.ts";
import { startReceiver } from "../bot/fixtures/receiver.ts";
import { hear } from "../bot/fixtures/media.ts";
import { switchedTone, waitHeard } from "../mic/helpers.ts";
import { dominantFrequency } from "../helpers/audio/analysis.ts";
import { channel, float, listen, waitFor as waitUntil } from "../listen/helpers.ts";
import { killSessionProcesses } from "../../control/bot/supervisor/orphans.ts";
import { clusterDatabase, clusterSnapshot, freePort, startProcessNode, waitFor, type ProcessNode } from "./fixtures/cluster.ts";

// Real Chromium, PulseAudio and ffmpeg: one such file at a time (see media-lock.ts); PostgreSQL only.
if (providers().includes("postgresql")) await holdMediaLock();

type Json = Record<string, unknown>;

const running_ = (n: ProcessNode): boolean => n.cp.proc.exitCode === null && n.cp.proc.signalCode === null;

/** SIGKILL of the control plane and of every process it started (workers, Chromium, ffmpeg, PulseAudio). */
async function killInstance(node: ProcessNode): Promise<void> {
  node.cp.proc.kill("SIGKILL");
  await node.cp.exited;
  await killSessionProcesses(resolve(node.recordingsDir));
}

describe("cluster end to end (three instances, real worker)", { skip: !providers().includes("postgresql") && "PostgreSQL only", timeout: 900_000 }, () => {
  test("placement, routing through other instances, takeover after SIGKILL, recovery at restart, drain on SIGTERM", async (t) => {
    const nodes = new Map<string, ProcessNode>();
    // One cleanup, in order: every instance's processes first, then what they were talking to.
    const cleanups: (() => unknown)[] = [];
    t.after(async () => {
      for (const n of nodes.values()) if (running_(n)) await killInstance(n);
      for (const fn of cleanups.reverse()) await fn();
    });
    const db = await clusterDatabase(t);
    const fixture = await startTeamsFixture();
    cleanups.push(() => fixture.close());
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const root = mkdtempSync(join(tmpdir(), "cluster-e2e-"));
    cleanups.push(() => rmSync(root, { recursive: true, force: true, maxRetries: 5 }));
    const mediaDir = join(root, "media");
    await import("node:fs/promises").then((fs) => fs.mkdir(mediaDir));
    const tone = await switchedTone(join(mediaDir, "tone.wav"), 4);
    const env = {
      MEETING_ALLOWED_HOSTS: fixture.hostPort,
      MIC_PLAYBACK_ENABLED: "true",
      MEDIA_DIR: mediaDir,
      WEBHOOK_URL: receiver.url,
      WEBHOOK_EVENTS: "true",
      DRAIN_TIMEOUT_SECONDS: "300",
    };
    let passed = false;
    t.after(() => {
      // On a failure, what each instance said last.
      if (passed || process.env.TEST_LOG === "1") return;
      for (const n of nodes.values()) t.diagnostic(`${n.id}:\n${n.cp.lines.slice(-15).join("\n")}`);
    });
    for (const id of ["e2e-a", "e2e-b", "e2e-c"]) {
      nodes.set(id, await startProcessNode({ databaseUrl: db.url, id, recordingsDir: join(root, id), port: await freePort(), env }));
    }
    const a = nodes.get("e2e-a")!;
    const meetings = new Map<string, FixtureMeeting>();
    const join_ = async (via: ProcessNode, reference: string): Promise<{ status: number; id: string; body: Json; retryAfter: string | null }> => {
      const meeting = fixture.createMeeting({ lobby: false, tone: { frequency: 440 } });
      const res = await via.request("POST", "/join", { body: { meeting_url: meeting.joinUrl, reference } });
      // A refusal says what admission saw (only step 1's fourth join is meant to be refused).
      if (res.status === 503) t.diagnostic(`join ${reference} refused: ${await clusterSnapshot(db.url)}`);
      const id = String(((res.body.session ?? {}) as Json).session_id ?? "");
      if (id) meetings.set(id, meeting);
      return { status: res.status, id, body: res.body, retryAfter: res.headers.get("retry-after") };
    };

    // 1. Three joins sent to one instance run on all three; the fourth is 503.
    const sessions: string[] = [];
    for (const ref of ["e2e-1", "e2e-2", "e2e-3"]) {
      const r = await join_(a, ref);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      sessions.push(r.id);
    }
    const running = await Promise.all(sessions.map((id) => waitFor(a, id, (s) => s.status === "recording", 240_000)));
    assert.deepEqual(new Set(running.map((s) => s.instance_id)), new Set(nodes.keys()));
    const owner = new Map(running.map((s) => [String(s.session_id), nodes.get(String(s.instance_id))!]));
    const fourth = await join_(a, "e2e-4");
    assert.equal(fourth.status, 503);
    assert.ok(Number(fourth.retryAfter) > 0);
    const [s1, s2, s3] = sessions as [string, string, string];
    const notOwner = (id: string): ProcessNode => [...nodes.values()].find((n) => n !== owner.get(id) && running_(n))!;

    // 2. Play, stop playback, a live ingest and status through an instance that is not the owner.
    const via = notOwner(s1);
    const m1 = meetings.get(s1)!;
    await m1.waitForPhase("in_call");
    let since = Date.now();
    const play = await via.request("POST", `/audio/${s1}/play`, { body: { path: "tone.wav" } });
    assert.equal(play.status, 200, play.text);
    await waitHeard(m1, since);
    assert.equal((await via.request("POST", `/audio/${s1}/stop`)).status, 200);
    const stream = await via.request("POST", `/audio/${s1}/stream`, { body: {} });
    assert.equal(stream.status, 200, stream.text);
    const ingestUrl = String(stream.body.ingest_url);
    assert.ok(ingestUrl.startsWith(via.url), "the ingest URL names the instance that was asked");
    since = Date.now();
    const bytes = await readFile(tone);
    const pushed = await fetch(ingestUrl, { method: "PUT", body: new Blob([bytes]).stream(), duplex: "half" } as RequestInit);
    assert.equal(pushed.status, 200);
    assert.equal(((await pushed.json()) as Json).bytes_received, bytes.length);
    await waitHeard(m1, since);
    assert.equal((await via.request("GET", `/status/${s1}`)).body.instance_id, owner.get(s1)!.id);
    // A live listener through that instance hears the meeting's tone; its DELETE there closes it.
    const opened = await via.request("POST", `/audio/${s1}/listen`, { body: { sample_rate: 16000, channels: 1, events: false } });
    assert.equal(opened.status, 200, opened.text);
    const listenUrl = String(opened.body.listen_url);
    assert.ok(listenUrl.startsWith(via.url.replace(/^http/, "ws")), `the listen URL names the instance that was asked: ${listenUrl}`);
    const listener = listen(listenUrl);
    await listener.opened;
    await waitUntil("a second of the meeting at the listener", () => listener.frames.length >= 60);
    // The strongest frequency: a loaded box's under-runs leave quiet moments zero crossings would miscount.
    const heardHz = dominantFrequency(float(channel(Buffer.concat(listener.frames.slice(10)), 1)), 16000, { minHz: 100, maxHz: 4000, stepHz: 2 });
    assert.ok(Math.abs(heardHz - 440) < 5, `the listener hears ${heardHz.toFixed(1)} Hz`);
    assert.equal((await via.request("DELETE", `/audio/${s1}/listen/${String(opened.body.token)}`)).status, 200);
    assert.equal((await listener.closed).code, 1000);

    // 3. /stop through another instance stops the bot on its owner.
    const stopped = await notOwner(s2).request("POST", `/stop/${s2}`);
    assert.equal(stopped.status, 200, stopped.text);
    const s2Done = await waitFor(a, s2, (s) => s.status === "stopped", 60_000);
    assert.equal(s2Done.end_reason, "stopped_by_api");
    assert.ok((await stat(String(s2Done.recording_file))).size > 0);
    const freeNode = owner.get(s2)!;

    // 3b. Concurrent joins with one reference on the three instances give one bot (in the free slot).
    const dupMeeting = fixture.createMeeting({ lobby: false, tone: { frequency: 440 } });
    const dup = await Promise.all([...nodes.values()].map((n) => n.request("POST", "/join", { body: { meeting_url: dupMeeting.joinUrl, reference: "e2e-dup" } })));
    for (const r of dup) assert.equal(r.status, 200, r.text);
    const dupIds = new Set(dup.map((r) => String((r.body.session as Json).session_id)));
    assert.equal(dupIds.size, 1, "one session for one reference");
    const dupId = [...dupIds][0]!;
    assert.equal((await waitFor(a, dupId, (s) => s.status === "recording", 240_000)).instance_id, freeNode.id);
    assert.equal(((await a.request("GET", "/sessions?reference=e2e-dup")).body.sessions as Json[]).length, 1);
    const dupVia = [...nodes.values()].find((n) => n !== freeNode)!;
    assert.equal((await dupVia.request("POST", `/stop/${dupId}`)).status, 200, "stopped through another instance");
    await waitFor(a, dupId, (s) => s.status === "stopped", 60_000);

    // 4. SIGKILL of every process of s1's instance: interrupted through the others, instance_lost.
    const victim = owner.get(s1)!;
    const survivor = notOwner(s1);
    const killedAt = Date.now();
    await killInstance(victim);
    const lost = await waitFor(survivor, s1, (s) => s.status === "interrupted", 90_000);
    const takeoverSeconds = (Date.now() - killedAt) / 1000;
    t.diagnostic(`takeover after ${takeoverSeconds.toFixed(1)} s`);
    assert.equal(lost.end_reason, "instance_lost");
    assert.equal(lost.instance_id, victim.id);
    const change = await receiver.waitFor((e) => e.event === "status_changed" && e.session_id === s1 && e.status === "interrupted");
    assert.equal(change.end_reason, "instance_lost");
    assert.equal(receiver.events.filter((e) => e.event === "finished" && e.session_id === s1).length, 0, "finished waits for the recording");

    // 5. New joins go to the survivors.
    const afterKill = await join_(survivor, "e2e-5");
    assert.equal(afterKill.status, 200, JSON.stringify(afterKill.body));
    const placedAfter = await waitFor(survivor, afterKill.id, (s) => s.status === "recording", 240_000);
    assert.equal(placedAfter.instance_id, freeNode.id, "the free survivor took it");

    // 6. The dead instance comes back with its volume: the recording is stored, one finished webhook.
    const back = await startProcessNode({ databaseUrl: db.url, id: victim.id, recordingsDir: victim.recordingsDir, port: victim.port, env });
    nodes.set(back.id, back);
    const finished = await receiver.waitFor((e) => e.event === "finished" && e.session_id === s1, 120_000);
    assert.equal(finished.status, "interrupted");
    assert.equal(finished.end_reason, "instance_lost");
    const stored = await waitFor(back, s1, (s) => s.recording_file !== null, 60_000);
    assert.equal(finished.recording_file, stored.recording_file);
    const heard = await hear(String(stored.recording_file));
    assert.ok(Math.abs(heard.frequency - 440) <= 10, `frequency ${heard.frequency}`);
    // The restart touched nobody else's session.
    for (const id of [s3, afterKill.id]) assert.equal((await waitFor(back, id, () => true)).status, "recording", `${id} untouched`);
    await new Promise((r) => setTimeout(r, 5000));
    assert.equal(receiver.events.filter((e) => e.event === "finished" && e.session_id === s1).length, 1, "exactly one finished webhook");
    assert.equal(receiver.events.filter((e) => e.event === "status_changed" && e.session_id === s1 && e.status === "interrupted").length, 1);

    // 7. SIGTERM to the instance running s3: it keeps recording, /readyz 503, new joins go elsewhere.
    const draining = owner.get(s3)!;
    draining.cp.proc.kill("SIGTERM");
    for (;;) {
      if ((await draining.request("GET", "/readyz")).status === 503) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const duringDrain = await join_(draining, "e2e-6");
    assert.equal(duringDrain.status, 200, JSON.stringify(duringDrain.body));
    const placedDuring = await waitFor(back, duringDrain.id, (s) => s.status === "recording", 240_000);
    assert.notEqual(placedDuring.instance_id, draining.id);
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal((await waitFor(back, s3, () => true)).status, "recording", "the draining instance's session goes on");
    assert.equal(draining.cp.proc.exitCode, null, "the instance waits for its session");
    const s3Stop = await back.request("POST", `/stop/${s3}`);
    assert.equal(s3Stop.status, 200, s3Stop.text);
    const s3Done = await waitFor(back, s3, (s) => s.status === "stopped", 60_000);
    assert.equal(s3Done.end_reason, "stopped_by_api");
    assert.equal(await draining.cp.exited, 0, "the drained instance exits cleanly");
    passed = true;
  });
});
