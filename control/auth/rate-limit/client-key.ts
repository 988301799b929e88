/**
 * The rate limiter's key for a caller address (login-service.md Limits: "an IPv6 caller counts as
 * its /64; an IPv4 caller counts as its address").
 *
 * - IPv4: the address.
 * - IPv6: its /64, by express-rate-limit's own `ipKeyGenerator`. One subscriber usually holds a
 *   whole /64 (often a /56 or /48), so keying by the full address would hand an attacker 2^64
 *   fresh budgets.
 * - IPv4 addresses carried inside IPv6, i.e. IPv4-mapped (::ffff:a.b.c.d, what a dual-stack
 *   socket reports) and NAT64 (64:ff9b::/96, 64:ff9b:1::/48 and configured prefixes): the
 *   embedded IPv4. Otherwise every IPv4 client behind one NAT64 gateway would share the
 *   gateway's /64 budget, and a client could double its budget by alternating address families.
 *   Of several matching prefixes the LONGEST wins: an operator's /56 or /96 inside the local-use
 *   64:ff9b:1::/48 puts the IPv4 at another place than the /48 layout would (issue #14 finding 5).
 *
 * Addresses are parsed by ipaddr.js; nothing here parses text by hand.
 */
import { isIP } from "node:net";
import { ipKeyGenerator } from "express-rate-limit";
import ipaddr from "ipaddr.js";

export interface Ipv6Prefix {
  network: ipaddr.IPv6;
  length: number;
}

/** RFC 6052 2.2: the only prefix lengths an IPv4-embedded IPv6 address may use. */
export const NAT64_PREFIX_LENGTHS = [32, 40, 48, 56, 64, 96] as const;

/** RFC 6052 well-known prefix and RFC 8215 local-use prefix. */
export const WELL_KNOWN_NAT64: readonly Ipv6Prefix[] = ["64:ff9b::/96", "64:ff9b:1::/48"].map((text) => {
  const prefix = parseNat64Prefix(text);
  if (!prefix) throw new Error(`bad built-in NAT64 prefix ${text}`);
  return prefix;
});

/** The login-service.md /64 of an IPv6 caller. */
const IPV6_SUBNET = 64;

/** Key of an address; `nat64` are the prefixes whose addresses are keyed by their IPv4. */
export function clientKey(ip: string | undefined, nat64: readonly Ipv6Prefix[] = WELL_KNOWN_NAT64): string {
  if (ip === undefined || ip === "") return "unknown";
  const bare = ip.replace(/%.*$/, "");
  if (isIP(bare) === 0) return `other:${ip}`;
  const address = ipaddr.parse(bare);
  if (address.kind() === "ipv4") return address.toString();
  const v6 = address as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  const prefix = longestMatch(v6, nat64);
  if (prefix) return embeddedIpv4(v6.toByteArray(), prefix.length);
  return ipKeyGenerator(v6.toString(), IPV6_SUBNET);
}

/** Parses `2001:db8:64::/96`; null when it is not an IPv6 prefix of an RFC 6052 length. */
export function parseNat64Prefix(text: string): Ipv6Prefix | null {
  let parsed: [ipaddr.IPv4 | ipaddr.IPv6, number];
  try {
    parsed = ipaddr.parseCIDR(text.trim());
  } catch {
    return null;
  }
  const [network, length] = parsed;
  if (network.kind() !== "ipv6" || !(NAT64_PREFIX_LENGTHS as readonly number[]).includes(length)) return null;
  return { network: network as ipaddr.IPv6, length };
}

function longestMatch(address: ipaddr.IPv6, prefixes: readonly Ipv6Prefix[]): Ipv6Prefix | undefined {
  let best: Ipv6Prefix | undefined;
  for (const prefix of prefixes) {
    if ((best === undefined || prefix.length > best.length) && address.match(prefix.network, prefix.length)) best = prefix;
  }
  return best;
}

/** RFC 6052 2.2: the IPv4 follows the prefix, skipping bits 64-71 (the reserved "u" octet). */
function embeddedIpv4(bytes: number[], prefixLength: number): string {
  const octets: number[] = [];
  for (let i = prefixLength / 8; octets.length < 4; i += 1) {
    if (i === 8) continue;
    octets.push(bytes[i] ?? 0);
  }
  return octets.join(".");
}
