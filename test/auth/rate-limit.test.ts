// Attack: password and code guessing spread across endpoints and addresses. One fixed-window
// budget per caller covers every limited endpoint; an IPv6 caller is its /64 (rotating through
// the 2^64 addresses of one's own subnet buys nothing); an IPv4 client reached over IPv4-mapped
// or NAT64 IPv6 (well-known or configured prefix) is its IPv4 (switching families buys nothing,
// and one NAT64 gateway does not pool its clients); X-Forwarded-For is believed only from a
// configured proxy, so a spoofed header buys no fresh budget.
import assert from "node:assert/strict";
import { describe, test, before, after } from "node:test";
import { parseConfig, ConfigError } from "../../control/config/index.ts";
import { clientKey, nat64Prefixes, parseNat64Prefix, WELL_KNOWN_NAT64 } from "../../control/auth/rate-limit/index.ts";
import { startTestApp, TEST_SIGNING_KEY, type TestApp } from "../harness/app.ts";
import { probeFeature } from "../helpers/oidc/probe-feature.ts";

describe("clientKey", () => {
  const configured = parseNat64Prefix("2001:db8:64::/96");
  const forty = parseNat64Prefix("2001:db8:100::/40");
  assert.ok(configured && forty);
  const prefixes = [...WELL_KNOWN_NAT64, configured, forty];
  const key = (ip: string | undefined) => clientKey(ip, prefixes);

  test("IPv4 is keyed by its address", () => {
    assert.equal(key("198.51.100.7"), "198.51.100.7");
    assert.notEqual(key("198.51.100.7"), key("198.51.100.8"));
  });

  test("IPv6 is keyed by its /64", () => {
    assert.equal(key("2001:db8:1:2::1"), "2001:db8:1:2::/64");
    assert.equal(key("2001:db8:1:2:ffff:ffff:ffff:ffff"), key("2001:db8:1:2::1"));
    assert.equal(key("2001:0db8:0001:0002:0000:0000:0000:0009"), key("2001:db8:1:2::1"), "spelling does not matter");
    assert.equal(key("2001:db8:1:2::1%eth0"), key("2001:db8:1:2::1"), "zone index dropped");
    assert.notEqual(key("2001:db8:1:3::1"), key("2001:db8:1:2::1"));
    assert.equal(key("::1"), "::/64");
  });

  test("IPv4-mapped IPv6 is keyed by its IPv4", () => {
    assert.equal(key("::ffff:198.51.100.7"), "198.51.100.7");
    assert.equal(key("::ffff:c633:6407"), "198.51.100.7");
    assert.equal(key("0:0:0:0:0:ffff:198.51.100.7"), "198.51.100.7");
  });

  test("NAT64 addresses are keyed by their embedded IPv4 (RFC 6052 layouts)", () => {
    assert.equal(key("64:ff9b::198.51.100.7"), "198.51.100.7");
    assert.equal(key("64:ff9b::c633:6407"), "198.51.100.7");
    // RFC 8215 local-use /48: IPv4 split around the reserved u-octet (bits 64-71).
    assert.equal(key("64:ff9b:1:c633:64:700::"), "198.51.100.7");
    assert.equal(key("2001:db8:64::198.51.100.7"), "198.51.100.7", "configured /96");
    assert.equal(key("2001:db8:1c6:3364:7::"), "198.51.100.7", "configured /40");
  });

  test("a NAT64-shaped address outside the known prefixes stays a /64", () => {
    assert.equal(clientKey("2001:db8:64::198.51.100.7"), "2001:db8:64::/64");
    assert.equal(clientKey("64:ff9b:2::198.51.100.7"), "64:ff9b:2::/64");
  });

  test("missing or odd addresses get a key of their own, never a throw", () => {
    assert.equal(key(undefined), "unknown");
    assert.equal(key(""), "unknown");
    assert.equal(key("not-an-ip"), "other:not-an-ip");
  });

  test("Nat64Prefixes entries are checked at startup", () => {
    assert.equal(parseNat64Prefix("2001:db8::/33"), null);
    assert.equal(parseNat64Prefix("2001:db8::"), null);
    assert.equal(parseNat64Prefix("banana/96"), null);
    const config = parseConfig({ LocalLogin: { SigningKey: TEST_SIGNING_KEY, RateLimit: { Nat64Prefixes: ["2001:db8:64::/96", "2001:db8::/33"] } } });
    assert.throws(() => nat64Prefixes(config), (e: unknown) => e instanceof ConfigError && e.message.includes("LocalLogin:RateLimit:Nat64Prefixes:1"));
  });
});

describe("rate limit over HTTP, no trusted proxy", () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ features: [probeFeature()], config: { LocalLogin: { RateLimit: { PermitLimit: 3, Window: "00:10:00" } } } });
  });
  after(() => app.close());

  test("one budget across endpoints; 429 with Retry-After and an errors body; spoofed X-Forwarded-For ignored", async () => {
    assert.equal((await app.request("POST", "/auth/probe/limited-a")).status, 200);
    assert.equal((await app.request("POST", "/auth/probe/limited-b")).status, 200);
    const third = await app.request("POST", "/auth/probe/limited-a", { headers: { "x-forwarded-for": "203.0.113.1" } });
    assert.equal(third.status, 200);
    assert.equal((third.body as { ip: string }).ip, "127.0.0.1", "the header of an unknown sender is not believed");
    for (const path of ["/auth/probe/limited-a", "/auth/probe/limited-b"]) {
      const res = await app.request("POST", path, { headers: { "x-forwarded-for": "203.0.113.99" } });
      assert.equal(res.status, 429, path);
      const retryAfter = Number(res.headers.get("retry-after"));
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 600, `Retry-After ${retryAfter}`);
      const body = res.body as { errors: unknown };
      assert.ok(Array.isArray(body.errors) && body.errors.length === 1 && typeof body.errors[0] === "string");
    }
    assert.equal((await app.request("POST", "/auth/probe/unlimited")).status, 200, "routes without the limiter are not counted");
  });
});

describe("rate limit over HTTP behind a known proxy", () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({
      features: [probeFeature()],
      config: {
        LocalLogin: { RateLimit: { PermitLimit: 3, Window: "00:10:00", Nat64Prefixes: ["2001:db8:64::/96"] } },
        ForwardedHeaders: { KnownProxies: ["127.0.0.1"] },
      },
    });
  });
  after(() => app.close());
  const from = (ip: string, path = "/auth/probe/limited-a") => app.request("POST", path, { headers: { "x-forwarded-for": ip } });

  test("IPv6 siblings in one /64 share a budget; another /64 has its own", async () => {
    assert.deepEqual(
      [(await from("2001:db8:1:2::1")).status, (await from("2001:db8:1:2::2")).status, (await from("2001:db8:1:2:abcd::3")).status],
      [200, 200, 200],
    );
    assert.equal((await from("2001:db8:1:2::ffff")).status, 429);
    const other = await from("2001:db8:1:3::1");
    assert.equal(other.status, 200);
    assert.equal((other.body as { key: string }).key, "2001:db8:1:3::/64");
  });

  test("IPv4, IPv4-mapped and NAT64 (well-known and configured) forms of one client share its budget", async () => {
    const forms = ["198.51.100.7", "::ffff:198.51.100.7", "64:ff9b::198.51.100.7", "64:ff9b:1:c633:64:700::", "2001:db8:64::c633:6407"];
    const statuses: number[] = [];
    for (const ip of forms) statuses.push((await from(ip)).status);
    assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
    assert.equal((await from("198.51.100.8")).status, 200, "a neighbour is not affected");
  });

  test("racing requests of one caller: exactly the permitted number pass", async () => {
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => from("192.0.2.50", i % 2 === 0 ? "/auth/probe/limited-a" : "/auth/probe/limited-b")));
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 200, 200, 429, 429, 429, 429, 429, 429, 429]);
  });
});

test("RateLimit:Enabled=false: no limiting", async (t) => {
  const app = await startTestApp({ features: [probeFeature()], config: { LocalLogin: { RateLimit: { Enabled: false, PermitLimit: 1 } } } });
  t.after(() => app.close());
  const statuses = await Promise.all(Array.from({ length: 5 }, () => app.request("POST", "/auth/probe/limited-a").then((r) => r.status)));
  assert.deepEqual(statuses, [200, 200, 200, 200, 200]);
});
