/**
 * Attack: hide many IPv4 clients in one rate-limit budget, or many budgets in one client, through a
 * NAT64 prefix the limiter reads wrongly. An operator's NAT64 prefix inside the local-use
 * 64:ff9b:1::/48 (RFC 8215) could not be configured: the built-in /48 matched first and read the
 * IPv4 from the wrong bits, so every IPv4 client behind the operator's gateway shared one budget
 * (one noisy client locks out the rest; the rest's guesses count against one key). The longest
 * matching prefix now wins, addresses are parsed by ipaddr.js and IPv6 callers are keyed by
 * express-rate-limit's own /64 helper. Raced over HTTP on the login route, both databases.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { clientKey, nat64Prefixes, WELL_KNOWN_NAT64 } from "../../control/auth/rate-limit/index.ts";
import { parseConfig } from "../../control/config/index.ts";
import { TEST_SIGNING_KEY } from "../harness/app.ts";
import { providers } from "../harness/databases.ts";
import { startAuthApp, type AuthTestApp } from "./helpers.ts";

/** An operator's /56 inside the local-use /48. */
const PREFIX = "64:ff9b:1:ab00::/56";
/** RFC 6052 /56 layout: 8 bits of the IPv4 before the u-octet (bits 64-71), 24 after it. */
const behindGateway = (a: number, b: number, c: number, d: number): string =>
  `64:ff9b:1:ab${a.toString(16).padStart(2, "0")}:${b.toString(16)}:${((c << 8) | d).toString(16)}::`;
const ALICE = behindGateway(192, 0, 2, 10);
const BOB = behindGateway(192, 0, 2, 11);
const PERMIT = 3;

describe("NAT64 prefix matching", () => {
  const config = parseConfig({ LocalLogin: { SigningKey: TEST_SIGNING_KEY, RateLimit: { Nat64Prefixes: [PREFIX] } } });
  test("a configured prefix inside the built-in /48 wins, whatever the order of the list", () => {
    const prefixes = nat64Prefixes(config);
    for (const list of [prefixes, [...prefixes].reverse()]) {
      assert.equal(clientKey(ALICE, list), "192.0.2.10");
      assert.equal(clientKey(BOB, list), "192.0.2.11");
    }
    // Without the configured prefix the /48 layout applies (what the issue saw: both the same).
    assert.equal(clientKey(ALICE, WELL_KNOWN_NAT64), clientKey(BOB, WELL_KNOWN_NAT64));
  });
});

for (const provider of providers()) {
  describe(`NAT64 clients keep budgets of their own (${provider})`, () => {
    let app: AuthTestApp;
    before(async () => {
      app = await startAuthApp(provider, {
        LocalLogin: { RateLimit: { Enabled: true, PermitLimit: PERMIT, Window: "00:10:00", Nat64Prefixes: [PREFIX] } },
        ForwardedHeaders: { KnownProxies: ["127.0.0.1"] },
      });
      await app.register("natalie", "natalie@example.com");
    });
    after(async () => {
      assert.deepEqual(app.logs.leaks(app.secrets), []);
      await app.close();
    });

    const guess = (from: string, i: number) =>
      app.request("POST", "/auth/login", { body: { identifier: "natalie", password: `guess ${i}` }, headers: { "x-forwarded-for": from } });

    test("two IPv4 clients behind one gateway, racing: each gets exactly its own budget", async () => {
      const results = await Promise.all([...Array.from({ length: 6 }, (_, i) => guess(ALICE, i)), ...Array.from({ length: 6 }, (_, i) => guess(BOB, i))]);
      const passed = (rs: typeof results) => rs.filter((r) => r.status !== 429).length;
      assert.equal(passed(results.slice(0, 6)), PERMIT, "alice");
      assert.equal(passed(results.slice(6)), PERMIT, "bob");
      for (const r of results) assert.ok(r.status === 401 || r.status === 429, `${r.status}`);
      // Another client behind the same gateway is untouched by both.
      assert.equal((await guess(behindGateway(192, 0, 2, 12), 99)).status, 401);
      // Its IPv4 form is the same caller as its NAT64 form (alternating families buys nothing).
      assert.equal((await guess("192.0.2.10", 100)).status, 429);
    });
  });
}
