/**
 * Shared limits (issue #19): with three instances on one PostgreSQL database the per-address
 * login budget (`LocalLogin:RateLimit`) is one budget for the cluster: guesses spread over the
 * instances are refused once the cluster-wide count is spent, and the lockout counter of an
 * account is shared the same way.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { providers } from "../harness/databases.ts";
import { clusterDatabase, startInProcessNode, type InProcessNode } from "./fixtures/cluster.ts";

describe("cluster-wide login limits", { skip: !providers().includes("postgresql") && "PostgreSQL only", timeout: 300_000 }, () => {
  test("the login rate limit holds across instances", async (t) => {
    const db = await clusterDatabase(t);
    const auth = { RateLimit: { PermitLimit: 4, Window: "00:10:00" } };
    const nodes: InProcessNode[] = [];
    for (const id of ["lim-a", "lim-b", "lim-c"]) nodes.push(await startInProcessNode({ db, id, auth }));
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++) {
      const node = nodes[i % 3]!;
      const res = await node.request("POST", "/auth/login", { body: { identifier: "nobody", password: `guess-${i}` } });
      statuses.push(res.status);
      if (res.status === 429) assert.ok(Number(res.headers.get("retry-after")) > 0, "429 carries Retry-After");
    }
    // Four guesses in the whole cluster, then every instance refuses (one process alone would allow 4 each = 12).
    assert.deepEqual(statuses, [401, 401, 401, 401, 429, 429, 429, 429, 429]);
  });

  test("the lockout counter of an account is shared by the instances", async (t) => {
    const db = await clusterDatabase(t);
    const auth = { AllowSelfRegistration: true, MaxFailedAttempts: 3, RateLimit: { PermitLimit: 1000 } };
    const nodes: InProcessNode[] = [];
    for (const id of ["lock-a", "lock-b", "lock-c"]) nodes.push(await startInProcessNode({ db, id, auth }));
    const password = "correct horse battery staple";
    const reg = await nodes[0]!.request("POST", "/auth/register", { body: { userName: "victim", email: "victim@example.com", password } });
    assert.ok(reg.status === 200 || reg.status === 201, reg.text);
    const fresh = await nodes[2]!.request("POST", "/auth/register", { body: { userName: "control", email: "control@example.com", password } });
    assert.ok(fresh.status === 200 || fresh.status === 201, fresh.text);
    assert.equal((await nodes[1]!.request("POST", "/auth/login", { body: { identifier: "control", password } })).status, 200, "the right password signs in while unlocked");
    for (const node of nodes) assert.equal((await node.request("POST", "/auth/login", { body: { identifier: "victim", password: "wrong guess!" } })).status, 401);
    // Three failures spread over three instances lock the account everywhere.
    for (const node of nodes) assert.equal((await node.request("POST", "/auth/login", { body: { identifier: "victim", password } })).status, 401, `locked on ${node.id}`);
  });
});
