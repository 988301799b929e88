import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import { createLogger } from "../../shared/log/logger.ts";
import { BOT_DISABLED_FEATURES, PLAYWRIGHT_DISABLED_FEATURES, PLAYWRIGHT_ENABLED_FEATURES } from "../../worker/browser/features.ts";
import { launchBrowser } from "../../worker/browser/launch.ts";
import { daemonInTempDir } from "../helpers/audio/daemon-dir.ts";
import { holdMediaLock } from "../harness/media-lock.ts";

// Real Chromium and PulseAudio: one such file at a time (see media-lock.ts).
await holdMediaLock();

const logger = createLogger({ level: process.env.LOG_LEVEL ?? "silent" });

/**
 * Chromium keeps only the last `--disable-features`/`--enable-features` (features.ts): the running
 * browser must have exactly one of each, holding Playwright's names, the bot's and an extra
 * arg's; and the omnibox popup's WebUI, which Chromium would otherwise load beside the page,
 * must not be there. The page's CSS animations end at once (still-page.ts).
 */
test("the browser runs with one merged feature list each, no omnibox WebUI and no CSS animation", { timeout: 120_000 }, async (t) => {
  const { dir, pulse, defer } = await daemonInTempDir(t, "media-flags-", logger);
  const browser = await launchBrowser({
    dir,
    pulseEnv: pulse.env,
    logger,
    mic: false,
    extraArgs: ["--disable-features=BackForwardCache", "--enable-features=OverlayScrollbar"],
  });
  defer(() => browser.close());

  const cmdline = (await readFile(`/proc/${browser.pid}/cmdline`, "utf8")).split("\0");
  const switches = (prefix: string) => cmdline.filter((a) => a.startsWith(prefix)).map((a) => a.slice(prefix.length).split(","));
  const disabled = switches("--disable-features=");
  const enabled = switches("--enable-features=");
  assert.equal(disabled.length, 1, `one --disable-features, got ${disabled.length}`);
  assert.equal(enabled.length, 1, `one --enable-features, got ${enabled.length}`);
  for (const name of [...PLAYWRIGHT_DISABLED_FEATURES, ...BOT_DISABLED_FEATURES, "BackForwardCache"]) assert.ok(disabled[0]?.includes(name), `${name} disabled`);
  for (const name of [...PLAYWRIGHT_ENABLED_FEATURES, "OverlayScrollbar"]) assert.ok(enabled[0]?.includes(name), `${name} enabled`);
  // launch.ts: the on-device AI service (56 MB, started 3 minutes in) is kept from starting.
  assert.ok(cmdline.includes("--optimization-guide-performance-class=9"), "the on-device model's performance class is given");
  // field-trials.ts: without a microphone the jitter buffer forgets the sink's bursts sooner.
  assert.ok(cmdline.includes("--force-fieldtrials=WebRTC-Audio-NetEqDelayManagerConfig/forget_factor:0.800/"), "the no-mic jitter buffer trial is given");

  // still-page.ts: an infinite CSS animation ends at once, its animationend fires, and the page's
  // DOM holds only what the page put there; a tile's speaking outline keeps its ring's animation.
  const doc = `<style>@keyframes spin { to { transform: rotate(360deg); } } #s { animation: spin 1s linear infinite; }
    @keyframes pulse { from { opacity: 0.5; } to { opacity: 1; } } #o::before { content: ""; animation: pulse 1s linear infinite; }</style>
    <div id="s">bot</div><div id="o" data-tid="voice-level-stream-outline"></div>
    <script>window.ended = false; document.getElementById("s").addEventListener("animationend", () => (window.ended = true));</script>`;
  await browser.page.goto(`data:text/html,${encodeURIComponent(doc)}`);
  await browser.page.waitForFunction(() => (window as unknown as { ended: boolean }).ended, undefined, { timeout: 10_000 });
  assert.deepEqual(
    await browser.page.evaluate(() => ({
      duration: getComputedStyle(document.getElementById("s") as Element).animationDuration,
      running: document.getAnimations().length,
      ring: getComputedStyle(document.getElementById("o") as Element, "::before").animationDuration,
      styles: document.querySelectorAll("style").length,
    })),
    { duration: "0s", running: 1, ring: "1s", styles: 1 },
  );
  const cdp = await browser.context.newCDPSession(browser.page);
  const { targetInfos } = (await cdp.send("Target.getTargets")) as { targetInfos: { type: string; url: string }[] };
  assert.deepEqual(
    targetInfos.filter((info) => info.url.startsWith("chrome://")).map((info) => info.url),
    [],
  );
});
