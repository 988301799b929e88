/**
 * Issue #15 "Long WAVs break PostgreSQL": `recordingBytes` is a 64-bit column on both providers
 * (a 4-hour WAV is 2.76 GB, past INTEGER's 2^31), still a JSON number in the API; and a final
 * write that fails is retried at once, so the session ends and frees its reference without a
 * restart (before: the row stayed `recording` and no `finished` webhook went out).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import Database from "better-sqlite3";
import pg from "pg";
import { freshDatabase, providers, type Provider } from "../harness/databases.ts";
import { MEETING_URL, startBotApp, waitForSession } from "../bot/fixtures/bot-app.ts";
import { startReceiver } from "../bot/fixtures/receiver.ts";

type Json = Record<string, unknown>;

/** Makes every final write of BotSession fail until `heal()` (a database outage, as far as the bot can tell). */
async function breakFinalWrites(provider: Provider, url: string): Promise<{ heal(): Promise<void> }> {
  if (provider === "sqlite") {
    const db = new Database(url.slice("file:".length));
    db.exec(`CREATE TRIGGER i15_outage BEFORE UPDATE ON BotSession WHEN NEW.endedAt IS NOT NULL BEGIN SELECT RAISE(ABORT, 'i15 test outage'); END;`);
    return { heal: async () => void (db.exec("DROP TRIGGER i15_outage"), db.close()) };
  }
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query(`CREATE FUNCTION i15_outage() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'i15 test outage'; END $$ LANGUAGE plpgsql`);
  await c.query(`CREATE TRIGGER i15_outage BEFORE UPDATE ON "BotSession" FOR EACH ROW WHEN (NEW."endedAt" IS NOT NULL) EXECUTE FUNCTION i15_outage()`);
  return { heal: async () => void (await c.query(`DROP TRIGGER i15_outage ON "BotSession"`), await c.end()) };
}

for (const provider of providers()) {
  test(`${provider}: a 4-hour WAV's size is stored and answered as a number`, { timeout: 180_000 }, async (t) => {
    const database = await freshDatabase(provider);
    t.after(() => database.drop());
    const app = await startBotApp(t, { provider, databaseUrl: database.url });
    const join = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, display_name: "fake:long", reference: "long-one" } });
    const id = String(((join.body as Json).session as Json).session_id);
    await waitForSession(app, id, (s) => s.status === "recording");
    await app.request("POST", `/stop/${id}`);
    const s = await waitForSession(app, id, (x) => x.status !== "recording", 120_000);
    assert.equal(s.status, "stopped", JSON.stringify(s));
    assert.equal(s.recording_bytes, 44 + 4 * 3600 * 192_000);
    const list = (await app.request("GET", "/sessions")).body as { sessions: Json[] };
    assert.equal(list.sessions.find((x) => x.session_id === id)?.recording_bytes, 44 + 4 * 3600 * 192_000);
    // The reference is free again.
    const again = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, display_name: "Next", reference: "long-one" } });
    assert.notEqual(((again.body as Json).session as Json).session_id, id);
  });

  test(`${provider}: a failed final write is retried at once; the session ends without a restart`, { timeout: 120_000 }, async (t) => {
    const database = await freshDatabase(provider);
    t.after(() => database.drop());
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    const app = await startBotApp(t, { provider, databaseUrl: database.url, bot: { WEBHOOK_URL: receiver.url }, feature: { finishRetry: { minDelayMs: 200, maxDelayMs: 1_000 } } });
    const join = await app.request("POST", "/join", { body: { meeting_url: MEETING_URL, display_name: "Retry", reference: "retry-one" } });
    const id = String(((join.body as Json).session as Json).session_id);
    await waitForSession(app, id, (s) => s.status === "recording");
    const outage = await breakFinalWrites(provider, database.url);
    await app.request("POST", `/stop/${id}`);
    // Long enough for the end to have failed at least once (the stop itself takes a moment).
    await new Promise((r) => setTimeout(r, 3_000));
    assert.equal(((await app.request("GET", `/status/${id}`)).body as Json).status, "recording", "the outage held the final write back");
    await outage.heal();
    const s = await waitForSession(app, id, (x) => x.status === "stopped", 60_000);
    assert.ok(s.recording_file);
    const hook = await receiver.waitFor((e) => e.session_id === id && e.event === "finished");
    assert.equal(hook.status, "stopped");
  });
}
