/**
 * WebRTC field trials for the bot's browser (Chromium's `--force-fieldtrials`).
 *
 * Without a microphone the browser's audio is pulled in the recording sink's 200 ms blocks while
 * nobody listens, and WebRTC's jitter buffer (NetEq) counts time in its own pulls: packets that
 * arrive between two bursts look up to 200 ms late, and it grows its target to that. Once a
 * listener has the sink paced (worker/listen/sink-pacer.ts) the pulls are regular again, but the
 * target only comes down as the delay history forgets the bursts: WebRTC's forget factor of 0.983
 * per 500 ms took ~45 s, during which a listener who came late heard the meeting ~250 ms late.
 * At 0.8 the first 9 bursts were slow, then 88-115 ms (`make bench-listen`, BENCH_SETTLE_MS=15000,
 * media server, 2026-11-27, load 0.5-0.8: 45 s at 0.983, 16 s at 0.9). The price: while someone
 * listens, a jitter spike of the network is forgotten after ~7 s rather than ~90 s; while nobody
 * listens the bursts keep the target above 200 ms anyway. With a microphone the browser's short
 * buffer paces its pulls all along, so none of this applies and WebRTC's defaults stay.
 * TOAMAISUTAA_NETEQ_FORGET_PERMILLE exists only for `make bench-listen` to A/B it
 * (BENCH_NETEQ_FORGET_PERMILLE).
 */
import { benchOverride } from "../../shared/process/bench-override.ts";

export const NO_MIC_NETEQ_FORGET_PERMILLE = 800;

export function fieldTrialArgs(mic: boolean, env: NodeJS.ProcessEnv = process.env): string[] {
  if (mic) return [];
  const forget = benchOverride("TOAMAISUTAA_NETEQ_FORGET_PERMILLE", NO_MIC_NETEQ_FORGET_PERMILLE, env);
  return [`--force-fieldtrials=WebRTC-Audio-NetEqDelayManagerConfig/forget_factor:${(forget / 1000).toFixed(3)}/`];
}
