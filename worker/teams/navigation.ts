import type { Frame, Page, Request } from "playwright-core";

/** A main-frame navigation that failed: where it was going and Chromium's error. */
export interface FailedNavigation {
  url: string;
  error: string;
}

export interface NavigationWatch {
  /** The failed navigation the page now shows Chromium's error page for; null otherwise. */
  failed(): FailedNavigation | null;
  dispose(): void;
}

/**
 * Remembers the main frame's last failed navigation. Chromium's error page replaces the URL with
 * `chrome-error://chromewebdata/`, so the page alone no longer tells where it was sent (a
 * redirect to a sign-in host that cannot be reached, a meeting host that went away).
 */
export function watchNavigation(page: Page): NavigationWatch {
  let last: FailedNavigation | null = null;
  const onFailed = (request: Request) => {
    try {
      if (!request.isNavigationRequest() || request.frame() !== page.mainFrame()) return;
    } catch {
      return; // a service worker's request has no frame
    }
    last = { url: request.url(), error: request.failure()?.errorText ?? "failed" };
  };
  const onNavigated = (frame: Frame) => {
    if (frame === page.mainFrame() && !frame.url().startsWith("chrome-error://")) last = null;
  };
  page.on("requestfailed", onFailed);
  page.on("framenavigated", onNavigated);
  return {
    failed: () => (last && page.url().startsWith("chrome-error://") ? last : null),
    dispose: () => {
      page.off("requestfailed", onFailed);
      page.off("framenavigated", onNavigated);
    },
  };
}
