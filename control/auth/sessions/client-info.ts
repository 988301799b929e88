/**
 * What a session row records about the client: the raw User-Agent (truncated, never parsed) and
 * the address per `LocalLogin:IpAddressStorage`. Anything but `None` stores personal data, so the
 * default stores nothing; `Truncated` keeps only the network (/24 for IPv4, /48 for IPv6), enough
 * to tell "home" from "abroad" without identifying a household.
 */
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import type { Request } from "express";

/** login-service.md "Session summary": truncated to 256 characters. */
export const USER_AGENT_MAX = 256;

export type IpStorage = "None" | "Truncated" | "Full";

export interface ClientInfo {
  userAgent: string | null;
  ipAddress: string | null;
}

export function clientInfo(req: Request, storage: IpStorage): ClientInfo {
  const ua = req.headers["user-agent"];
  return {
    userAgent: typeof ua === "string" && ua !== "" ? ua.slice(0, USER_AGENT_MAX) : null,
    ipAddress: storedAddress(req.ip, storage),
  };
}

export function storedAddress(raw: string | undefined, storage: IpStorage): string | null {
  if (storage === "None" || raw === undefined || raw === "") return null;
  const bare = raw.replace(/%.*$/, "");
  if (isIP(bare) === 0) return storage === "Full" ? raw : null;
  const address = ipaddr.parse(bare);
  // An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d; store the IPv4 form.
  const v4 = address.kind() === "ipv4" ? (address as ipaddr.IPv4) : (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : null;
  if (storage === "Full") return v4 !== null && address.kind() === "ipv6" ? v4.toString() : raw;
  if (v4 !== null) return `${v4.octets.slice(0, 3).join(".")}.0`;
  // The /48: the first three hextets, without leading zeros.
  return `${(address as ipaddr.IPv6).parts.slice(0, 3).map((h) => h.toString(16)).join(":")}::`;
}
