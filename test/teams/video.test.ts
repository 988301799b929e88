// Incoming video (issue #20): the fixture's realistic meeting sends three canvas cameras on its
// WebRTC path; the browser's video guard keeps the bot's page from receiving (so decoding) any of
// them, without touching audio or data channels; Teams' "Turn off incoming video" is used where
// offered. Real headless Chromium; what the page decoded comes from its own getStats().
import assert from "node:assert/strict";
import { after, before, test, type TestContext } from "node:test";
import type { Page } from "playwright-core";
import type { MeetingOptions, MeetingState } from "../fixture/teams/server.ts";
import { installVideoGuard, videoGuardCounts } from "../../worker/browser/video-guard.ts";
import { joinMeeting, turnOffIncomingVideo } from "../../worker/teams/index.ts";
import { startHarness, stopHarness, type Harness } from "./harness.ts";
import { holdMediaLock } from "../harness/media-lock.ts";

await holdMediaLock();

let h: Harness | undefined;
before(async () => (h = await startHarness()));
after(() => stopHarness(h));

const TIMEOUT = { timeout: 90_000 };
/** Small, cheap video: the guard's behaviour does not depend on the size (the bench uses 720p). */
const SMALL_VIDEO = { streams: 3, width: 320, height: 180, fps: 15 };

async function page(t: TestContext, guard: boolean): Promise<Page> {
  assert.ok(h);
  const context = await h.browser.newContext();
  t.after(() => context.close().catch(() => undefined));
  if (guard) await installVideoGuard(context);
  return context.newPage();
}

async function inCall(t: TestContext, guard: boolean, options: Partial<MeetingOptions>) {
  assert.ok(h);
  const meeting = h.fixture.createMeeting({ lobby: false, video: SMALL_VIDEO, ...options });
  const p = await page(t, guard);
  const outcome = await joinMeeting(p, { url: meeting.joinUrl, displayName: "Bot", logger: h.logger, timeoutMs: 30_000 });
  assert.equal(outcome.kind, "in_call", JSON.stringify(outcome));
  return { meeting, page: p };
}

/** The state once the page has sent `reports` more media reports than `after`. */
async function afterReports(state: () => MeetingState, reports: number, after = 0): Promise<MeetingState> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const s = state();
    if (s.mediaReports >= after + reports && s.media) return s;
    if (Date.now() > deadline) throw new Error(`only ${s.mediaReports} media reports: ${JSON.stringify(s.media)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test("without the guard the fixture's video is received and decoded (the control)", TIMEOUT, async (t) => {
  const { meeting } = await inCall(t, false, { offersVideoOff: false });
  const s = await afterReports(() => meeting.state(), 4);
  assert.ok(s.media && s.media.framesDecoded > 0, JSON.stringify(s.media));
  assert.equal(s.media.videoReceiversActive, 3);
  assert.ok(s.media.audioPacketsReceived > 0);
});

test("with the guard and no Teams switch: no video receiver, no frame decoded, audio flows", TIMEOUT, async (t) => {
  const { meeting, page: p } = await inCall(t, true, { offersVideoOff: false, churn: true });
  const first = await afterReports(() => meeting.state(), 2);
  const s = await afterReports(() => meeting.state(), 4, first.mediaReports);
  assert.ok(s.media, "media reported");
  assert.equal(s.media.framesDecoded, 0, JSON.stringify(s.media));
  assert.equal(s.media.framesReceived, 0);
  assert.equal(s.media.videoReceiversActive, 0);
  assert.equal(s.media.framesEncoded, 0, "the imitated server sends nothing to a client that takes no video");
  assert.ok(s.media.audioPacketsReceived > (first.media?.audioPacketsReceived ?? 0), "audio keeps arriving");
  const counts = await videoGuardCounts(p);
  assert.ok(counts && counts.demoted >= 3 && counts.connections >= 2, JSON.stringify(counts));
  // The tiles are there, as in Teams; they only show no picture.
  assert.equal(await p.locator('[data-stream-type="Video"]').count(), 3);
});

test("Teams' \"Turn off incoming video\" is chosen where offered, and video stops", TIMEOUT, async (t) => {
  assert.ok(h);
  const { meeting, page: p } = await inCall(t, false, {});
  await afterReports(() => meeting.state(), 2);
  const result = await turnOffIncomingVideo(p, h.logger);
  assert.ok(result.ok, JSON.stringify(result));
  assert.match(result.signal ?? "", /Turn off incoming video/);
  for (let i = 0; i < 50 && meeting.state().incomingVideo; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(meeting.state().incomingVideo, false);
  const before = await afterReports(() => meeting.state(), 1, meeting.state().mediaReports);
  const later = await afterReports(() => meeting.state(), 3, before.mediaReports);
  assert.equal(later.media?.framesDecoded, before.media?.framesDecoded, "no frame decoded after the switch");
  assert.ok((later.media?.audioPacketsReceived ?? 0) > (before.media?.audioPacketsReceived ?? 0));
});

test("a page without the switch: the walk reports it and leaves the menu closed", TIMEOUT, async (t) => {
  assert.ok(h);
  const { page: p } = await inCall(t, true, { offersVideoOff: false });
  const result = await turnOffIncomingVideo(p, h.logger);
  assert.equal(result.ok, false);
  assert.match(result.signal ?? "", /not offered/);
  assert.equal(await p.locator('[role="menu"]').count(), 0);
});

test("the guard leaves audio (with its contributing sources) and data channels alone", TIMEOUT, async (t) => {
  assert.ok(h);
  const p = await page(t, true);
  await p.goto(`${h.fixture.url}/_fixture/static/app.css`);
  const result = await p.evaluate(async () => {
    const ctx = new AudioContext();
    const osc = ctx.createOscillator();
    const dest = ctx.createMediaStreamDestination();
    osc.connect(dest);
    osc.start();
    const canvas = document.createElement("canvas");
    canvas.width = 160;
    canvas.height = 90;
    const g = canvas.getContext("2d");
    let n = 0;
    const draw = setInterval(() => {
      if (!g) return;
      g.fillStyle = `hsl(${(n += 10) % 360} 50% 50%)`;
      g.fillRect(0, 0, 160, 90);
    }, 50);
    const video = canvas.captureStream(20);
    const pc1 = new RTCPeerConnection();
    const pc2 = new RTCPeerConnection();
    // Teams' main-channel, opened by the client; the service speaks on it.
    const channel = pc2.createDataChannel("main-channel");
    const received = new Promise<string>((resolve) => (channel.onmessage = (m) => resolve(String(m.data))));
    pc1.ondatachannel = (e) => (e.channel.onopen = () => e.channel.send(JSON.stringify([{ type: "dsh", history: [1053] }])));
    pc1.addTrack(dest.stream.getAudioTracks()[0]!, dest.stream);
    pc1.addTrack(video.getVideoTracks()[0]!, video);
    // The receiving side offers here (legacy option included), the other way round from the fixture.
    pc2.addTransceiver("audio", { direction: "recvonly" });
    pc2.addTransceiver("video", { direction: "recvonly" });
    // The fixture's own loopback (test/fixture/teams/public/loopback.js), served beside this page.
    const loopback = "/_fixture/static/loopback.js";
    const { connectPeers } = (await import(loopback)) as { connectPeers: (a: RTCPeerConnection, b: RTCPeerConnection, o: { offerOptions: RTCOfferOptions }) => Promise<RTCSessionDescriptionInit> };
    const offer = await connectPeers(pc2, pc1, { offerOptions: { offerToReceiveVideo: true } as RTCOfferOptions });
    const message = await Promise.race([received, new Promise<string>((r) => setTimeout(() => r("no message in 20 s"), 20_000))]);
    await new Promise((r) => setTimeout(r, 3000));
    let audioPackets = 0;
    let framesDecoded = 0;
    (await pc2.getStats()).forEach((s: { type: string; kind?: string; packetsReceived?: number; framesDecoded?: number }) => {
      if (s.type === "inbound-rtp" && s.kind === "audio") audioPackets += s.packetsReceived ?? 0;
      if (s.type === "inbound-rtp" && s.kind === "video") framesDecoded += s.framesDecoded ?? 0;
    });
    const audioReceiver = pc2.getReceivers().find((r) => r.track.kind === "audio");
    const csrcs = audioReceiver?.getContributingSources();
    clearInterval(draw);
    pc1.close();
    pc2.close();
    return { message, audioPackets, framesDecoded, csrcsIsArray: Array.isArray(csrcs), offerVideo: /m=video[\s\S]*?a=(inactive|sendonly|recvonly|sendrecv)/.exec(offer.sdp ?? "")?.[1] };
  });
  assert.equal(result.message, JSON.stringify([{ type: "dsh", history: [1053] }]));
  assert.ok(result.audioPackets > 0, JSON.stringify(result));
  assert.equal(result.framesDecoded, 0);
  assert.equal(result.offerVideo, "inactive", "the offer's video m-line takes nothing");
  assert.equal(result.csrcsIsArray, true);
});
