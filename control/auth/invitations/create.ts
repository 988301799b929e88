/**
 * POST {prefix}/invitations (Account rule 13): reserve a user row for an address and mail a
 * single-use token to it through the invitation hook; the token is never returned. Inviting an
 * address again reuses its reservation and retires the earlier links, so only the newest mail
 * works. If the hook throws, a reservation made by this call is deleted with its token (no
 * half-made account lingers) and the answer is 502; a reservation that existed before stays, with
 * every link retired (the one just made reached nobody).
 *
 * An address another local account holds verified is refused: completing the invitation would
 * prove it a second time and leave two accounts holding one proven address. The refusal is 400
 * (input the admin can correct), because login-service.md lists 201, 400, 403 and 502 for this
 * endpoint and keeps 409 for the self-service address endpoints and taken user names.
 */
import { randomUUID } from "node:crypto";
import { AppError, fail } from "../../http/errors.ts";
import type { AuthContext } from "../context.ts";
import { ADDRESS_TAKEN, addressHeldElsewhere, lockAddress, normaliseEmail } from "../email/address.ts";
import { buildLink } from "../hooks/index.ts";
import { deliver, DeliveryFailed, issueSingleUseToken, requireHook, retireTokens } from "../single-use/index.ts";
import { findOpenInvitation, INVITATION } from "./open.ts";

export interface CreatedInvitation {
  userId: string;
  email: string;
}

export async function createInvitation(ctx: AuthContext, email: string): Promise<CreatedInvitation> {
  requireHook(ctx, "invitation");
  const normalized = normaliseEmail(email);
  const now = ctx.now();
  const issued = await ctx.db.$transaction(async (tx) => {
    // Two admins inviting one address at once must end with one reservation, not two.
    await lockAddress(tx, normalized, now);
    if (await addressHeldElsewhere(tx, "", normalized)) throw fail.badRequest(ADDRESS_TAKEN);
    const existing = await findOpenInvitation(tx, normalized);
    const userId = existing?.id ?? randomUUID();
    if (!existing) await tx.user.create({ data: { id: userId, securityStamp: randomUUID(), reserved: true, email } });
    const { token } = await issueSingleUseToken(ctx, tx, { kind: INVITATION, userId, email: normalized, retireEarlier: true });
    return { userId, token, isNew: existing === null, address: existing?.email ?? email };
  });
  try {
    await deliver(ctx, "invitation", { to: email, userId: issued.userId, userName: null, token: issued.token, link: buildLink(ctx.config, INVITATION, issued.token) });
  } catch (error) {
    if (!(error instanceof DeliveryFailed)) throw error;
    if (issued.isNew) {
      // Cascade removes the token with the row.
      await ctx.db.user.deleteMany({ where: { id: issued.userId, reserved: true } });
      ctx.logger.warn({ userId: issued.userId }, "invitation hook failed: new reservation rolled back");
    } else {
      await retireTokens(ctx.db, { kind: INVITATION, userId: issued.userId }, ctx.now());
      ctx.logger.warn({ userId: issued.userId }, "invitation hook failed: existing reservation kept, its links retired");
    }
    throw new AppError("notification_failed", { message: "The invitation could not be delivered. Try again later.", cause: error });
  }
  ctx.logger.info({ userId: issued.userId, reused: !issued.isNew }, "invitation sent");
  return { userId: issued.userId, email: issued.address };
}
