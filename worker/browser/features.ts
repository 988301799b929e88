/**
 * Chromium's feature switches for the bot's browser. Chromium keeps only the LAST
 * `--disable-features` (and `--enable-features`) on its command line, and Playwright already
 * passes one of each: adding ours after it would silently drop Playwright's list (MediaRouter,
 * PaintHolding, OptimizationHints…), and an extra arg with its own would drop ours. So the
 * launch removes Playwright's two switches (`ignoreDefaultArgs`, exact strings) and passes one
 * of each holding Playwright's names, ours and any from extra args. test/media/browser-flags.test.ts
 * reads the running browser's command line to check that exactly one of each is left.
 */

/** Playwright's own lists (playwright-core 1.65, chromiumSwitches.ts), removed and re-added merged. */
export const PLAYWRIGHT_DISABLED_FEATURES: readonly string[] = [
  "AvoidUnnecessaryBeforeUnloadCheckSync",
  "DestroyProfileOnBrowserClose",
  "HttpsUpgrades",
  "HttpsFirstBalancedModeAutoEnable",
  "LensOverlay",
  "MediaRouter",
  "PaintHolding",
  "ThirdPartyStoragePartitioning",
  "AvoidCorsURLLoaderRestartOnRedirect",
  "TcpPortRandomizationWin",
  "OptimizationHints",
  "NetworkTimeServiceQuerying",
  "AimEnabled",
  "PreconnectToSearch",
  "msForceBrowserSignIn",
  "msEdgeUpdateLaunchServicesPreferredVersion",
];
export const PLAYWRIGHT_ENABLED_FEATURES: readonly string[] = ["CDPScreenshotNewSurface", "SkipListAccountsWithoutGaiaCookies"];

/**
 * What the bot turns off, each measured with bench/bot/flags-ab.ts (A and B at once):
 * - the omnibox popup's WebUI, which Chromium 156 preloads in a renderer of its own even headless
 *   (chrome://omnibox-popup.top-chrome, 50-60 MB PSS and ~2 % of a core), and the spare renderer
 *   kept warm for the next navigation (10-13 MB): a bot opens one page and never types a URL.
 *   Together: PSS 298 → 233 MB (0.78), CPU 0.97, 13 → 11 processes.
 */
export const BOT_DISABLED_FEATURES: readonly string[] = [
  "PreloadTopChromeWebUI",
  "WebUIOmniboxPopup",
  "WebUIOmniboxAimPopup",
  "WebUIOmniboxFullPopup",
  "SpareRendererForSitePerProcess",
  // Local Network Access: a public page (Teams) reaching the loopback asks the user first, which a
  // headless bot never answers; the page tap's encoded path (worker/listen/page-tap/encoded-script.ts)
  // sends the meeting's frames to its worker at 127.0.0.1 (measured: refused from an opaque page
  // without this, open with it).
  "LocalNetworkAccessChecks",
];
/**
 * - the network service in the browser process instead of a process of its own: PSS 212 → 190 MB
 *   (0.89), CPU 19.1 → 19.1 % core (1.00), 11 → 10 processes. A crash of it now takes the
 *   browser down, which the worker already treats as a browser failure.
 */
export const BOT_ENABLED_FEATURES: readonly string[] = ["NetworkServiceInProcess2"];

const DISABLE = "--disable-features=";
const ENABLE = "--enable-features=";

export interface FeatureArgs {
  /** The args without any feature switch, then one `--disable-features` and one `--enable-features`. */
  args: string[];
  /** Playwright's own two feature switches, exactly as it passes them, for `ignoreDefaultArgs`. */
  ignoreDefaultArgs: string[];
}

/** Merges Playwright's feature lists, the bot's and any feature switches in `args` into one each. */
export function withFeatures(args: readonly string[]): FeatureArgs {
  const disabled = [...PLAYWRIGHT_DISABLED_FEATURES, ...BOT_DISABLED_FEATURES];
  const enabled = [...PLAYWRIGHT_ENABLED_FEATURES, ...BOT_ENABLED_FEATURES];
  const rest: string[] = [];
  for (const arg of args) {
    if (arg.startsWith(DISABLE)) disabled.push(...names(arg.slice(DISABLE.length)));
    else if (arg.startsWith(ENABLE)) enabled.push(...names(arg.slice(ENABLE.length)));
    else rest.push(arg);
  }
  return {
    args: [...rest, DISABLE + unique(disabled).join(","), ENABLE + unique(enabled).join(",")],
    ignoreDefaultArgs: [DISABLE + PLAYWRIGHT_DISABLED_FEATURES.join(","), ENABLE + PLAYWRIGHT_ENABLED_FEATURES.join(",")],
  };
}

const names = (list: string): string[] => list.split(",").map((s) => s.trim()).filter(Boolean);
const unique = (list: string[]): string[] => [...new Set(list)];
