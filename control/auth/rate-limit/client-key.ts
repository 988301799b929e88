/**
 * The rate limiter's key for a caller address (login-service.md Limits: "an IPv6 caller counts as
 * its /64; an IPv4 caller counts as its address").
 *
 * - IPv4: the address.
 * - IPv6: its /64. One subscriber usually holds a whole /64 (often a /56 or /48), so keying by
 *   the full address would hand an attacker 2^64 fresh budgets.
 * - IPv4 addresses carried inside IPv6, i.e. IPv4-mapped (::ffff:a.b.c.d, what a dual-stack
 *   socket reports) and NAT64 (64:ff9b::/96, 64:ff9b:1::/48 and configured prefixes): the
 *   embedded IPv4. Otherwise every IPv4 client behind one NAT64 gateway would share the
 *   gateway's /64 budget, and a client could double its budget by alternating address families.
 */
import { isIPv4, isIPv6 } from "node:net";

export interface Ipv6Prefix {
  bytes: Uint8Array;
  length: number;
}

/** RFC 6052 2.2: the only prefix lengths an IPv4-embedded IPv6 address may use. */
export const NAT64_PREFIX_LENGTHS = [32, 40, 48, 56, 64, 96] as const;

const MAPPED: Ipv6Prefix = { bytes: bytesOf([0, 0, 0, 0, 0, 0xffff, 0, 0]), length: 96 };
/** RFC 6052 well-known prefix and RFC 8215 local-use prefix. */
export const WELL_KNOWN_NAT64: readonly Ipv6Prefix[] = [
  { bytes: bytesOf([0x64, 0xff9b, 0, 0, 0, 0, 0, 0]), length: 96 },
  { bytes: bytesOf([0x64, 0xff9b, 1, 0, 0, 0, 0, 0]), length: 48 },
];

/** Key of an address; `nat64` are the prefixes whose addresses are keyed by their IPv4. */
export function clientKey(ip: string | undefined, nat64: readonly Ipv6Prefix[] = WELL_KNOWN_NAT64): string {
  if (ip === undefined || ip === "") return "unknown";
  if (isIPv4(ip)) return ip;
  const bytes = parseIpv6(ip);
  if (!bytes) return `other:${ip}`;
  if (matches(bytes, MAPPED)) return embeddedIpv4(bytes, 96);
  for (const prefix of nat64) if (matches(bytes, prefix)) return embeddedIpv4(bytes, prefix.length);
  const hextets: string[] = [];
  for (let i = 0; i < 8; i += 2) hextets.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  return `${hextets.join(":")}::/64`;
}

/** Parses `2001:db8:64::/96`; null when it is not an IPv6 prefix of an RFC 6052 length. */
export function parseNat64Prefix(text: string): Ipv6Prefix | null {
  const [address, len] = text.trim().split("/");
  const length = Number(len);
  if (address === undefined || !(NAT64_PREFIX_LENGTHS as readonly number[]).includes(length)) return null;
  const bytes = parseIpv6(address);
  return bytes ? { bytes, length } : null;
}

/** 16 bytes of an IPv6 address (zone index dropped, dotted IPv4 tail allowed); null if invalid. */
export function parseIpv6(text: string): Uint8Array | null {
  const ip = text.replace(/%.*$/, "");
  if (!isIPv6(ip)) return null;
  let head = ip;
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(ip);
  if (dotted?.[1]) {
    const o = dotted[1].split(".").map(Number);
    tail.push(((o[0] ?? 0) << 8) | (o[1] ?? 0), ((o[2] ?? 0) << 8) | (o[3] ?? 0));
    head = ip.slice(0, -dotted[1].length);
    // "a:b::1.2.3.4" keeps its "::"; "a:b:c:d:e:f:1.2.3.4" drops the separating ":".
    if (!head.endsWith("::")) head = head.slice(0, -1);
  }
  const hex = (part: string) => (part === "" ? [] : part.split(":").map((h) => parseInt(h, 16)));
  const [left = "", right] = head === "::" ? ["", ""] : head.split("::");
  const l = hex(left);
  const r = right === undefined ? [] : hex(right);
  const missing = 8 - l.length - r.length - tail.length;
  if (missing < 0 || (right === undefined && missing !== 0)) return null;
  return bytesOf([...l, ...new Array<number>(missing).fill(0), ...r, ...tail]);
}

function bytesOf(hextets: number[]): Uint8Array {
  const bytes = new Uint8Array(16);
  hextets.forEach((h, i) => {
    bytes[i * 2] = (h >> 8) & 0xff;
    bytes[i * 2 + 1] = h & 0xff;
  });
  return bytes;
}

function matches(bytes: Uint8Array, prefix: Ipv6Prefix): boolean {
  for (let bit = 0; bit < prefix.length; bit += 8) {
    if (bytes[bit / 8] !== prefix.bytes[bit / 8]) return false;
  }
  return true;
}

/** RFC 6052 2.2: the IPv4 follows the prefix, skipping bits 64-71 (the reserved "u" octet). */
function embeddedIpv4(bytes: Uint8Array, prefixLength: number): string {
  const octets: number[] = [];
  for (let i = prefixLength / 8; octets.length < 4; i += 1) {
    if (i === 8) continue;
    octets.push(bytes[i] ?? 0);
  }
  return octets.join(".");
}
