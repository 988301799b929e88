/**
 * What a session row records about the client: the raw User-Agent (truncated, never parsed) and
 * the address per `LocalLogin:IpAddressStorage`. Anything but `None` stores personal data, so the
 * default stores nothing; `Truncated` keeps only the network (/24 for IPv4, /48 for IPv6), enough
 * to tell "home" from "abroad" without identifying a household.
 */
import { isIPv4, isIPv6 } from "node:net";
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
  // An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d; store the IPv4 form.
  const ip = raw.toLowerCase().startsWith("::ffff:") && isIPv4(raw.slice(7)) ? raw.slice(7) : raw;
  if (storage === "Full") return ip;
  if (isIPv4(ip)) return `${ip.split(".").slice(0, 3).join(".")}.0`;
  if (isIPv6(ip)) return `${expandIPv6(ip).slice(0, 3).join(":")}::`;
  return null;
}

/** The eight hextets of an IPv6 address (zone id dropped), without leading zeros. */
function expandIPv6(ip: string): string[] {
  const [head = "", tail] = ip.replace(/%.*$/, "").split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const fill = Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0");
  return [...left, ...fill, ...right].map((h) => (h.replace(/^0+(?=.)/, "") || "0").toLowerCase());
}
