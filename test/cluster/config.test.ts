/** Cluster mode switches on only with PostgreSQL + INSTANCE_URL + CLUSTER_SECRET; half a cluster is refused. */
import assert from "node:assert/strict";
import { hostname } from "node:os";
import { test } from "node:test";
import { ConfigError, parseConfig } from "../../control/config/index.ts";
import { clusterSettings } from "../../control/cluster/settings.ts";
import { TEST_SIGNING_KEY } from "../harness/app.ts";

const PG = "postgres://postgres@127.0.0.1:5432/x";
const SECRET = "0123456789abcdef0123";
const config = (server: Record<string, unknown>, bot: Record<string, unknown>) =>
  parseConfig({ server: server as never, bot: bot as never, LocalLogin: { SigningKey: TEST_SIGNING_KEY } });
const refusal = (fn: () => unknown): ConfigError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  assert.fail("expected a ConfigError");
};

test("SQLite, or PostgreSQL without the cluster keys: no cluster", () => {
  assert.equal(clusterSettings(config({}, {})), null);
  assert.equal(clusterSettings(config({ DATABASE_URL: PG }, {})), null);
});

test("PostgreSQL + INSTANCE_URL + CLUSTER_SECRET: cluster mode with defaults", () => {
  const s = clusterSettings(config({ DATABASE_URL: PG }, { INSTANCE_URL: "http://a:8000/", CLUSTER_SECRET: SECRET, MAX_RECORDING_MINUTES: 2, MAX_CONCURRENT_SESSIONS: 3 }));
  assert.ok(s);
  assert.equal(s.instanceUrl, "http://a:8000");
  assert.equal(s.instanceId, hostname().replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 63));
  assert.equal(s.drainMs, 120_000);
  assert.equal(s.maxSessions, 3);
  const named = clusterSettings(config({ DATABASE_URL: PG }, { INSTANCE_URL: "http://a:8000", CLUSTER_SECRET: SECRET, INSTANCE_ID: "rec-2", DRAIN_TIMEOUT_SECONDS: 5 }));
  assert.equal(named?.instanceId, "rec-2");
  assert.equal(named?.drainMs, 5000);
});

test("half a cluster, a cluster on SQLite, a short secret or a bad URL stop the start", () => {
  assert.equal(refusal(() => config({}, { INSTANCE_URL: "http://a:8000", CLUSTER_SECRET: SECRET })).key, "INSTANCE_URL");
  assert.equal(refusal(() => config({ DATABASE_URL: PG }, { INSTANCE_URL: "http://a:8000" })).key, "CLUSTER_SECRET");
  assert.equal(refusal(() => config({ DATABASE_URL: PG }, { CLUSTER_SECRET: SECRET })).key, "INSTANCE_URL");
  assert.equal(refusal(() => config({ DATABASE_URL: PG }, { INSTANCE_URL: "http://a:8000", CLUSTER_SECRET: "short" })).key, "CLUSTER_SECRET");
  assert.equal(refusal(() => config({ DATABASE_URL: PG }, { INSTANCE_URL: "a:8000", CLUSTER_SECRET: SECRET })).key, "INSTANCE_URL");
  assert.equal(refusal(() => config({}, { INSTANCE_ID: "../x" })).key, "INSTANCE_ID");
});
