/**
 * One side of bench/bot/node-flags-ab.ts: a Node process that does what a worker's Node does for
 * a meeting (loads Playwright, starts PulseAudio and Chromium, joins the fixture's realistic
 * meeting, stays in it), then reports its own PSS and CPU over the window. Run by the parent
 * with the Node flags under test; argv: fixture join URL, seconds.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "../../shared/log/logger.ts";
import { startPulse } from "../../worker/audio/pulse.ts";
import { launchBrowser } from "../../worker/browser/launch.ts";
import { joinMeeting } from "../../worker/teams/index.ts";

const [url, seconds] = [process.argv[2] ?? "", Number(process.argv[3] ?? 20)];
const logger = createLogger({ level: "warn" });
const dir = mkdtempSync(join(tmpdir(), "node-flags-ab-"));
const pulse = await startPulse({ dir, logger, mic: false });
const browser = await launchBrowser({ dir, pulseEnv: pulse.env, logger, mic: false });
const ownPss = () => Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync("/proc/self/smaps_rollup", "utf8"))?.[1] ?? NaN) / 1024;
try {
  const outcome = await joinMeeting(browser.page, { url, displayName: "AB", logger });
  if (outcome.kind !== "in_call") throw new Error(JSON.stringify(outcome));
  // The parent starts both sides' windows together: wait for its go.
  process.send?.({ joined: true });
  await new Promise<void>((resolve) => process.once("message", () => resolve()));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  // What a worker does while in a meeting: look at the page now and then.
  const end = t0 + seconds * 1000;
  while (performance.now() < end) {
    await browser.page.evaluate(() => document.querySelectorAll("[data-tid]").length);
    await new Promise((r) => setTimeout(r, 1000));
  }
  const cpu = process.cpuUsage(cpu0);
  const cpuPct = ((cpu.user + cpu.system) / 1000 / (performance.now() - t0)) * 100;
  process.send?.({ pss: ownPss(), heapMb: process.memoryUsage().heapTotal / 2 ** 20, cpu: cpuPct });
} finally {
  await browser.close();
  await pulse.stop();
  rmSync(dir, { recursive: true, force: true });
}
