/**
 * POST {prefix}/invitations/revoke: removes the reserved account of an open invitation (cascade
 * deletes its tokens, so every link mailed for it stops working). 404 when none is open.
 */
import { fail } from "../../http/errors.ts";
import type { AuthContext } from "../context.ts";
import { normaliseEmail } from "../email/address.ts";
import { INVITATION } from "./open.ts";

export async function revokeInvitation(ctx: AuthContext, email: string): Promise<void> {
  const normalized = normaliseEmail(email);
  // One conditional delete: a completion racing this either finished first (no longer reserved:
  // nothing deleted, 404) or finds no token afterwards.
  const { count } = await ctx.db.user.deleteMany({
    where: { reserved: true, singleUseTokens: { some: { kind: INVITATION, email: normalized } } },
  });
  if (count === 0) throw fail.notFound("No open invitation for this address.");
  ctx.logger.info({ removedReservations: count }, "invitation revoked");
}
