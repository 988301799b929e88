/**
 * POST {prefix}/invitations/complete (Account rules 1, 2, 14): the token names exactly one
 * reserved account; completing it sets that account's user name and password and signs it in.
 * It can never create an arbitrary account: no reserved row, no account.
 *
 * All in one transaction: consume the token (conditional update, so concurrent completions get
 * one account), check the user name and the address, write the credential. A taken user name (or
 * an address proven elsewhere meanwhile) throws 409 and rolls the consumption back, so the
 * invitee can retry with another name. Opening the mailed link proves the address: it is stored
 * verified and released from every account that only typed it.
 */
import type { Request } from "express";
import { isUniqueViolation } from "../../db/client.ts";
import { fail } from "../../http/errors.ts";
import type { AuthContext } from "../context.ts";
import { assertAddressFree, lockAddress, releaseFromOthers } from "../email/address.ts";
import { assertAcceptablePassword } from "../passwords/policy.ts";
import { completeSignIn } from "../sign-in/complete.ts";
import { normaliseUserName } from "../sign-in/find-credential.ts";
import type { TokenPairBody } from "../sign-in/token-pair.ts";
import { consumeSingleUseToken, retireTokens } from "../single-use/index.ts";
import { INVITATION } from "./open.ts";

const BAD_LINK = "This invitation link is not valid or has expired. Ask for a new invitation.";
const NAME_TAKEN = "This user name is taken. Choose another one.";

export interface CompleteInvitation {
  token: string;
  userName: string;
  password: string;
  req: Request;
}

export async function completeInvitation(ctx: AuthContext, input: CompleteInvitation): Promise<TokenPairBody> {
  assertAcceptablePassword(ctx.config, input.password);
  const passwordHash = await ctx.hasher.hash(input.password);
  const normalizedUserName = normaliseUserName(input.userName);
  const now = ctx.now();
  const userId = await ctx.db.$transaction(async (tx) => {
    const row = await consumeSingleUseToken(tx, INVITATION, input.token, now);
    if (!row?.email) throw fail.badRequest(BAD_LINK);
    const user = await tx.user.findUnique({ where: { id: row.userId }, select: { reserved: true, email: true } });
    if (!user?.reserved) throw fail.badRequest(BAD_LINK);
    await lockAddress(tx, row.email, now);
    if (await tx.passwordCredential.findUnique({ where: { normalizedUserName }, select: { userId: true } })) throw fail.conflict(NAME_TAKEN);
    await assertAddressFree(tx, row.userId, row.email);
    const address = user.email ?? row.email;
    try {
      await tx.passwordCredential.create({
        data: { userId: row.userId, userName: input.userName, normalizedUserName, email: address, normalizedEmail: row.email, emailConfirmedAt: now, passwordHash },
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw fail.conflict(NAME_TAKEN);
      throw error;
    }
    const { count } = await tx.user.updateMany({ where: { id: row.userId, reserved: true }, data: { reserved: false, email: address } });
    if (count !== 1) throw fail.badRequest(BAD_LINK);
    await releaseFromOthers(tx, row.userId, row.email);
    await retireTokens(tx, { kind: INVITATION, userId: row.userId }, now);
    return row.userId;
  });
  ctx.logger.info({ userId }, "invitation completed");
  return completeSignIn(ctx, { userId, amr: ["pwd"], authTime: now, req: input.req });
}
