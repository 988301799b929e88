/**
 * Readiness by part (issue 13): a recorder dependency that is down (Chromium missing, a remote
 * store unreachable) takes `/readyz` and `/readyz/bot` out of rotation but not `/readyz/auth`, so
 * sign-in keeps serving; every part turns 503 `shutdown` the moment a stop begins, while the
 * requests already in flight are still answered.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test, type TestContext } from "node:test";
import { authFeature } from "../../control/auth/feature.ts";
import { createBotFeature } from "../../control/bot/feature.ts";
import { cheapHasher, PASSWORD } from "../auth/helpers.ts";
import { FAKE_WORKER } from "../bot/fixtures/bot-app.ts";
import { startTestApp, type TestApp } from "../harness/app.ts";
import { providers } from "../harness/databases.ts";

type Part = { status: string; problems: Record<string, string> };

async function both(t: TestContext, provider: "sqlite" | "postgresql", bot: Record<string, unknown>, storage?: Parameters<typeof createBotFeature>[0]): Promise<TestApp> {
  const recordings = mkdtempSync(join(tmpdir(), "ready-rec-"));
  const app = await startTestApp({
    provider,
    config: { LocalLogin: { AllowSelfRegistration: true }, bot: { RECORDINGS_DIR: recordings, ...bot } as never },
    host: { hooks: { passwordReset: async () => undefined }, passwordHasher: cheapHasher() },
    features: [authFeature, createBotFeature({ storage: { backend: "local" }, ...storage, workerModule: FAKE_WORKER, recoveryWaitMs: 0 })],
  });
  t.after(() => app.close());
  t.after(() => rmSync(recordings, { recursive: true, force: true }));
  return app;
}

for (const provider of providers()) {
  describe(`readiness by part (${provider})`, { timeout: 120_000 }, () => {
    test("a missing Chromium or an unreachable store: /readyz and /readyz/bot 503, /readyz/auth 200 and sign-in works", async (t) => {
      const app = await both(t, provider, { CHROMIUM_PATH: "/nonexistent/chromium" }, { storage: { backend: "s3", bucket: "b", region: "us-east-1", endpoint: "http://127.0.0.1:9", forcePathStyle: true } });
      const whole = await app.request("GET", "/readyz");
      assert.equal(whole.status, 503);
      const body = whole.body as Part & { parts: Record<string, Part> };
      assert.match(body.problems.chromium ?? "", /CHROMIUM_PATH/);
      assert.ok(body.problems.storage, JSON.stringify(body));
      assert.deepEqual(body.parts.auth, { status: "ready", problems: {} });
      assert.equal(body.parts.bot?.status, "not_ready");
      assert.ok(body.parts.bot?.problems.storage);
      assert.deepEqual((await app.request("GET", "/readyz/auth")).body, { status: "ready", problems: {} });
      assert.equal((await app.request("GET", "/readyz/auth")).status, 200);
      const botPart = await app.request("GET", "/readyz/bot");
      assert.equal(botPart.status, 503);
      assert.match((botPart.body as Part).problems.chromium ?? "", /CHROMIUM_PATH/);
      assert.equal((await app.request("GET", "/readyz/nope")).status, 404);
      // Sign-in serves regardless.
      const reg = await app.request("POST", "/auth/register", { body: { userName: "ready", email: "ready@example.test", password: PASSWORD } });
      assert.equal(reg.status, 201, reg.text);
      // Both routes are documented.
      const doc = (await app.request("GET", "/openapi.json")).body as { paths: Record<string, unknown> };
      assert.ok(doc.paths["/readyz"] && doc.paths["/readyz/{part}"], Object.keys(doc.paths).filter((p) => p.startsWith("/ready")).join());
    });

    test("a stop turns every part 503 at once while a request in flight is still answered", async (t) => {
      const app = await both(t, provider, {});
      assert.equal((await app.request("GET", "/readyz")).status, 200);
      // The same app behind a second listener: the stopping server no longer accepts connections.
      const probe = createServer(app.server.instance.app);
      await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
      t.after(() => new Promise((r) => probe.close(r)));
      const probeUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
      await app.request("POST", "/auth/register", { body: { userName: "inflight", email: "inflight@example.test", password: PASSWORD } });
      const login = app.request("POST", "/auth/login", { body: { identifier: "inflight", password: PASSWORD } });
      while (app.server.requests.inFlight === 0) await new Promise((r) => setImmediate(r));
      const stopping = app.server.stop({ graceMs: 5_000 });
      for (const path of ["/readyz", "/readyz/auth", "/readyz/bot"]) {
        const res = await fetch(`${probeUrl}${path}`);
        const body = (await res.json()) as Part;
        assert.equal(res.status, 503, path);
        assert.equal(body.problems.shutdown, "the service is shutting down");
      }
      assert.equal((await login).status, 200);
      await stopping;
    });
  });
}
