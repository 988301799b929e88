/**
 * What the speaker timeline's observation costs per bot (issue #17), measured within each bot:
 * every bot observes and pauses its observation in turns of `periodMs`
 * (worker/observe/duty-cycle.ts), and its CPU in an observed window is compared with the paused
 * window right after it. The same browser, page, meeting and neighbours on both sides of each
 * pair, so neither the 6 % spread between bots nor a slow drift of the shared box's speed enters
 * the difference; what the pause leaves running (the page script's RTCPeerConnection wrapper,
 * the WebSocket frame filter) costs nothing between events. bench/bot/observe-ab.ts measures the
 * whole observation against bots without it, with the noise that brings.
 */
import { sessionPaths } from "../../control/bot/paths.ts";
import { observedAt } from "../../worker/observe/duty-cycle.ts";
import type { startTeamsFixture } from "../../test/fixture/teams/server.ts";
import { cpuBetween, machine, mean, treeTicks, type TreeTicks } from "./measure.ts";
import { api, startPlane, talkingPeople, waitStatus } from "./observe-ab.ts";

type Fixture = Awaited<ReturnType<typeof startTeamsFixture>>;
type Json = Record<string, unknown>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Left out at the start of each window: the pause or resume itself, and the sampler's first round. */
const SETTLE_MS = 1_000;
/** Left out at its end: the look must land inside the window. */
const MARGIN_MS = 300;

/** CPU of each tree (% of a core per kind) over the measured part of the window starting at `start`. */
async function windowCpu(markers: string[], start: number, periodMs: number): Promise<Map<string, Map<string, number>>> {
  await sleep(start + SETTLE_MS - Date.now());
  const t0 = performance.now();
  const before = await treeTicks(markers);
  await sleep(start + periodMs - MARGIN_MS - Date.now());
  const after = await treeTicks(markers);
  const seconds = (performance.now() - t0) / 1000;
  return new Map(markers.map((m) => [m, cpuBetween(before.get(m) ?? (new Map() as TreeTicks), after.get(m) ?? new Map(), seconds)]));
}

const stats = (values: number[]): { mean: number; se: number } => {
  const m = mean(values);
  const variance = values.reduce((s, v) => s + (v - m) ** 2, 0) / Math.max(1, values.length - 1);
  return { mean: m, se: Math.sqrt(variance / Math.max(1, values.length)) };
};

/** `bots` bots in a plane of their own, `pairs` observed/paused window pairs each, printed. */
export async function observationCostWithin(fixture: Fixture, dir: string, bots: number, pairs: number, periodMs: number): Promise<void> {
  console.log(`\nobservation within each bot: ${bots} bots observing and paused in turns of ${periodMs / 1000} s, ${pairs} pairs each, four people speaking in turns; ${machine()}`);
  process.env.TOAMAISUTAA_OBSERVE_ALTERNATE_MSEC = String(periodMs);
  const plane = await startPlane(dir, fixture.hostPort, bots, true, "within");
  try {
    const seconds = (pairs * 2 + 2) * (periodMs / 1000) + 60;
    const ids = await Promise.all(
      Array.from({ length: bots }, async (_, i) => {
        const meeting = fixture.createMeeting({ lobby: false, people: talkingPeople(seconds) });
        const joined = await api(plane.target, "POST", "/join", { meeting_url: meeting.joinUrl, display_name: `Within ${i + 1}` });
        const id = String((joined.session as Json).session_id);
        await waitStatus(plane.target, id, "recording");
        return id;
      }),
    );
    const markers = ids.map((id) => sessionPaths(plane.target.recordingsDir, id, "wav").sessionDir);
    // Past Chromium's start-up burst (the first pair of windows read 1-3 % low without it), then the next observed window.
    await sleep(30_000);
    let start = Math.ceil(Date.now() / periodMs) * periodMs;
    if (!observedAt(start, periodMs)) start += periodMs;
    const diffs = new Map<string, number[]>(markers.map((m) => [m, []]));
    const kindDiffs = new Map<string, number[]>();
    const onAll: number[] = [];
    const offAll: number[] = [];
    for (let p = 0; p < pairs; p++, start += 2 * periodMs) {
      const on = await windowCpu(markers, start, periodMs);
      const off = await windowCpu(markers, start + periodMs, periodMs);
      for (const m of markers) {
        const a = on.get(m) ?? new Map<string, number>();
        const b = off.get(m) ?? new Map<string, number>();
        onAll.push(a.get("all") ?? 0);
        offAll.push(b.get("all") ?? 0);
        diffs.get(m)?.push((a.get("all") ?? 0) - (b.get("all") ?? 0));
        for (const kind of new Set([...a.keys(), ...b.keys()])) {
          if (kind === "all") continue;
          const list = kindDiffs.get(kind) ?? [];
          list.push((a.get(kind) ?? 0) - (b.get(kind) ?? 0));
          kindDiffs.set(kind, list);
        }
      }
    }
    markers.forEach((m, i) => {
      const d = stats(diffs.get(m) ?? []);
      console.log(`  bot ${i + 1}: observed − paused ${d.mean.toFixed(2)} ± ${d.se.toFixed(2)} % of a core (pairs: ${(diffs.get(m) ?? []).map((v) => v.toFixed(1)).join(" ")})`);
    });
    for (const [kind, list] of [...kindDiffs].sort(([a], [b]) => a.localeCompare(b))) {
      const d = stats(list);
      console.log(`  ${kind.padEnd(24)} ${d.mean.toFixed(2).padStart(6)} ± ${d.se.toFixed(2)} % of a core`);
    }
    const all = stats([...diffs.values()].flat());
    console.log(`  observed windows ${mean(onAll).toFixed(2)} %, paused ${mean(offAll).toFixed(2)} % of a core per bot`);
    console.log(`observation cost per bot (within-bot, observed − paused, ${bots} × ${pairs} pairs): ${all.mean.toFixed(2)} ± ${all.se.toFixed(2)} % of a core (± one standard error); ${machine()}`);
    await Promise.all(ids.map((id) => api(plane.target, "POST", `/stop/${id}`)));
  } finally {
    delete process.env.TOAMAISUTAA_OBSERVE_ALTERNATE_MSEC;
    await plane.server.stop({ graceMs: 10_000 });
  }
}
