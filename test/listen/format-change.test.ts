/**
 * A listener keeps hearing the meeting unbroken while others come and go at other formats: the
 * encoded path decodes at the highest rate listened to and mixes in the most channels, so a 48 kHz
 * stereo listener arriving (and leaving) changes both under a 16 kHz mono one.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { BotApp } from "../bot/fixtures/bot-app.ts";
import { findGaps, toneSpans } from "../helpers/audio/analysis.ts";
import { holdMediaLock } from "../harness/media-lock.ts";
import { Cleanups } from "../mic/helpers.ts";
import { channel, float, openListener, sleep, toneSession, waitFor } from "./helpers.ts";

await holdMediaLock();

const TONE_HZ = 440;

describe("live listening while formats change (real worker)", { timeout: 300_000 }, () => {
  const cleanups = new Cleanups();
  after(() => cleanups.run());
  let app: BotApp;
  let id = "";

  before(async () => {
    ({ app, id } = await toneSession(cleanups.context, { toneHz: TONE_HZ, displayName: "Listen Bot" }));
  });

  test("a 16 kHz mono listener hears the tone unbroken while a 48 kHz stereo one comes and goes", async () => {
    const a = await openListener(app, id, { sample_rate: 16000, channels: 1, events: false }, cleanups.context);
    await waitFor("2 s at the first listener", () => a.frames.length >= 100);
    const from = a.frames.length;
    await sleep(2_000);
    const b = await openListener(app, id, { sample_rate: 48000, channels: 2, events: false }, cleanups.context);
    await waitFor("1 s at the second listener", () => b.frames.length >= 50);
    await sleep(2_000);
    assert.equal((await app.request("DELETE", `/audio/${id}/listen/${b.token}`)).status, 200);
    await sleep(3_000);
    const pcm = float(channel(Buffer.concat(a.frames.slice(from)), 1));
    assert.ok(pcm.length >= 16000 * 6, `${pcm.length / 16000} s heard`);
    assert.deepEqual(findGaps(pcm, 16000, { minGapMs: 100 }), [], "gaps");
    const spans = toneSpans(pcm, 16000, TONE_HZ);
    assert.equal(spans.length, 1, `one unbroken span of the tone: ${JSON.stringify(spans.slice(0, 6))}`);
  });
});
