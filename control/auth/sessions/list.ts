/**
 * The session list of a user (login-service.md "Session summary"): every live family with its
 * live (unrotated, unexpired) token. Families past either expiry are not listed (Account rule 17).
 */
import type { AuthContext } from "../context.ts";
import { parseAmr } from "../tokens/access-token.ts";
import { isoWithOffset } from "../../../shared/timestamp.ts";

export interface SessionSummary {
  id: string;
  userAgent: string;
  ipAddress: string;
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string;
  authenticationMethods: string[];
  isCurrent: boolean;
}

export async function listSessions(ctx: AuthContext, userId: string, currentSessionId: string | null): Promise<SessionSummary[]> {
  const now = ctx.now();
  const families = await ctx.db.refreshFamily.findMany({
    where: { userId, revokedAt: null, absoluteExpiresAt: { gt: now } },
    include: { tokens: { where: { rotatedAt: null, expiresAt: { gt: now } }, orderBy: { expiresAt: "desc" }, take: 1 } },
    orderBy: { lastUsedAt: "desc" },
  });
  const summaries: SessionSummary[] = [];
  for (const family of families) {
    const live = family.tokens[0];
    if (!live) continue;
    const expiresAt = live.expiresAt.getTime() < family.absoluteExpiresAt.getTime() ? live.expiresAt : family.absoluteExpiresAt;
    summaries.push({
      id: family.id,
      // Rows from before session listing carry no client details (spec "Versioning"): shown empty.
      userAgent: family.userAgent ?? "",
      ipAddress: family.ipAddress ?? "",
      createdAt: isoWithOffset(family.createdAt),
      lastUsedAt: isoWithOffset(family.lastUsedAt),
      expiresAt: isoWithOffset(expiresAt),
      authenticationMethods: parseAmr(family.amr),
      isCurrent: currentSessionId !== null && family.id === currentSessionId,
    });
  }
  return summaries;
}
