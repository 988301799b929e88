/**
 * teams-dom.md §0: when Teams moves the guest out of the light web experience
 * (`lightExperience=false` in the URL) the join is restarted from the link, and a meeting that
 * keeps doing it ends in an error instead of a hang. A tiny page server, real headless Chromium.
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { chromium, type Browser } from "playwright-core";
import { createLogger } from "../../shared/log/logger.ts";
import { joinMeeting } from "../../worker/teams/index.ts";
import { launchOptions } from "./harness.ts";

const logger = createLogger({ level: process.env.LOG_LEVEL ?? "silent" });
const page = (body: string): string => `<!doctype html><meta charset="utf-8"><body>${body}</body>`;
let browser: Browser | undefined;
let server: Server | undefined;
let origin = "";
/** Meeting id → how many times its link was opened; "always" meetings redirect every time. */
const opens = new Map<string, number>();

before(async () => {
  browser = await chromium.launch(launchOptions());
  server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", origin);
    const id = url.pathname.split("/")[2] ?? "";
    if (url.searchParams.get("lightExperience") === "false") {
      res.writeHead(200, { "content-type": "text/html" }).end(page("<p>Loading Microsoft Teams…</p>"));
      return;
    }
    const n = (opens.get(id) ?? 0) + 1;
    opens.set(id, n);
    if (id === "always" || n === 1) {
      res.writeHead(302, { location: `${url.pathname}${url.search}&lightExperience=false` }).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/html" }).end(page("<p>Someone will let you in soon</p>"));
  });
  await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  await browser?.close();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
});

async function join(t: { after: (fn: () => Promise<void>) => void }, id: string) {
  assert.ok(browser);
  const context = await browser.newContext();
  t.after(() => context.close());
  return joinMeeting(await context.newPage(), { url: `${origin}/meet/${id}?p=x`, displayName: "Bot", logger, timeoutMs: 20_000 });
}

test("moved out of the light experience once: the join restarts and reaches the lobby", { timeout: 60_000 }, async (t) => {
  const outcome = await join(t, "once");
  assert.equal(outcome.kind, "lobby", JSON.stringify(outcome));
  assert.equal(opens.get("once"), 2);
});

test("moved out every time: two restarts, then a clear error", { timeout: 60_000 }, async (t) => {
  const outcome = await join(t, "always");
  assert.equal(outcome.kind, "error");
  assert.equal(opens.get("always"), 3);
});
