/** Per-address rate limiting of the identity service's guessable endpoints. */
export { authRateLimit, nat64Prefixes } from "./limiter.ts";
export { clientKey, parseNat64Prefix, WELL_KNOWN_NAT64, type Ipv6Prefix } from "./client-key.ts";
