/**
 * Revoking sessions (refresh families). Each revocation is a conditional update on
 * `revokedAt: null`, so a family is revoked once and its audit event emitted once, however many
 * requests race to revoke it.
 */
import type { Db } from "../../db/client.ts";
import type { AuthContext } from "../context.ts";

type Writer = Pick<Db, "refreshFamily">;

/** Revokes one live family; true when this call revoked it (false: unknown or already revoked). */
export async function revokeFamily(
  ctx: AuthContext,
  input: { familyId: string; reason: string; userId?: string },
  db: Writer = ctx.db,
): Promise<boolean> {
  const { count } = await db.refreshFamily.updateMany({
    where: { id: input.familyId, revokedAt: null, ...(input.userId === undefined ? {} : { userId: input.userId }) },
    data: { revokedAt: ctx.now(), revokeReason: input.reason },
  });
  return count === 1;
}

/** Revokes every live family of a user except `keep`; returns the ids this call revoked. */
export async function revokeUserFamilies(
  ctx: AuthContext,
  input: { userId: string; reason: string; keep?: string | null },
  db: Writer = ctx.db,
): Promise<string[]> {
  const where = { userId: input.userId, revokedAt: null, ...(input.keep ? { id: { not: input.keep } } : {}) };
  const live = await db.refreshFamily.findMany({ where, select: { id: true } });
  const revoked: string[] = [];
  for (const { id } of live) {
    if (await revokeFamily(ctx, { familyId: id, reason: input.reason, userId: input.userId }, db)) revoked.push(id);
  }
  return revoked;
}
