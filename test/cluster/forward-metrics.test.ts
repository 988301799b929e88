/**
 * A request an instance forwards to the session's owner is counted under its route template on
 * that instance too (issue #13's `http_requests_total`), not as `unmatched`. Two in-process
 * instances share one metrics registry, so the template counts the request twice (entry and
 * owner) and `unmatched` not at all.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { MEETING_URL } from "../bot/fixtures/bot-app.ts";
import { http } from "../../control/metrics/registry.ts";
import { clusterDatabase, startInProcessNode, waitFor } from "./fixtures/cluster.ts";

type Json = Record<string, unknown>;
const count = async (route: string, method: string, status: string): Promise<number> =>
  (await http.requests.get()).values.find((v) => v.labels.route === route && v.labels.method === method && v.labels.status === status)?.value ?? 0;

describe("metrics of forwarded requests (fake worker)", { skip: !providers().includes("postgresql") && "PostgreSQL only", timeout: 120_000 }, () => {
  test("a forwarded request is counted under its route template", async (t) => {
    const db = await clusterDatabase(t);
    const bot = { MIC_PLAYBACK_ENABLED: true };
    const nodes = [await startInProcessNode({ db, id: "fm-a", bot }), await startInProcessNode({ db, id: "fm-b", bot })];
    const joined = await nodes[0]!.request("POST", "/join", { body: { meeting_url: MEETING_URL } });
    assert.equal(joined.status, 200, joined.text);
    const id = String((joined.body.session as Json).session_id);
    const running = await waitFor(nodes[0]!, id, (s) => s.status === "recording");
    const entry = nodes.find((n) => n.id !== running.instance_id)!;

    const template = "/audio/:session_id/stop";
    const [before, unmatchedBefore] = [await count(template, "POST", "200"), await count("unmatched", "POST", "200")];
    const r = await entry.request("POST", `/audio/${id}/stop`);
    assert.equal(r.status, 200, r.text);
    assert.equal(await count(template, "POST", "200"), before + 2, "counted by the entry instance and the owner");
    assert.equal(await count("unmatched", "POST", "200"), unmatchedBefore);
  });
});
