/**
 * Roles from a claim of an external token. `Oidc:RoleClaim` is a claim name or a dotted path
 * (`realm_access.roles`, Keycloak's shape); a claim whose own name contains dots (namespaced
 * claims such as `https://example.com/roles`) is found by its full name first.
 */
import type { JWTPayload } from "jose";

export function rolesFromClaims(claims: JWTPayload, roleClaim: string): string[] {
  const value = roleClaim in claims ? claims[roleClaim] : dig(claims, roleClaim.split("."));
  if (typeof value === "string") return value === "" ? [] : [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string");
  return [];
}

function dig(value: unknown, path: string[]): unknown {
  let current = value;
  for (const part of path) {
    if (typeof current !== "object" || current === null || Array.isArray(current)) return undefined;
    if (!Object.hasOwn(current, part)) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}
