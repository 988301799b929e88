/**
 * Step-up (decisions.md `POST /2fa/step-up`): a live code raises the CURRENT session (same
 * `toa_sid`) instead of starting a new one. The family row is updated in the same transaction that
 * spends the code, so `amr` (only grows), `toa_2fa_source` and `toa_2fa_at` are carried by every
 * later refresh, and a session revoked meanwhile cannot be raised.
 */
import type { AuthContext } from "../context.ts";
import { fail } from "../../http/errors.ts";
import type { Principal } from "../bearer/index.ts";
import { issueAccessToken, mergeAmr, parseAmr, type IssuedAccessToken } from "../tokens/access-token.ts";
import { METHODS } from "./methods.ts";
import { guardedAttempt, spendCode, type Attempt } from "./proof.ts";
import { twoFactorKeys } from "./secret-keys.ts";

class WrongCode extends Error {}

export const wrongCode = () => fail.badRequest("The code is not valid or was already used.");

/**
 * A locked account's code is refused unchecked: 429 with `Retry-After` (decisions.md 429 body),
 * on every bearer route that takes a code. Not 401: on a bearer route that says the access token
 * is dead, and clients sign the user out (audit F3).
 */
export const tooManyWrongCodes = (ctx: AuthContext) => fail.tooManyRequests(Math.ceil(ctx.config.LocalLogin.LockoutDuration / 1000), "Too many wrong codes. Try again later.");

export async function stepUp(ctx: AuthContext, principal: Principal, code: string): Promise<IssuedAccessToken> {
  const sessionId = principal.local ? principal.sessionId : null;
  if (sessionId === null) throw fail.badRequest("Step-up needs a session signed in with this service.");
  const userId = principal.userId;
  const result = await guardedAttempt(ctx, userId, async (): Promise<Attempt<NonNullable<Awaited<ReturnType<typeof raise>>>>> => {
    try {
      const family = await raise(ctx, userId, sessionId, code);
      return family ? { ok: true, value: family } : { ok: false, wrong: false };
    } catch (error) {
      if (error instanceof WrongCode) return { ok: false, wrong: true };
      throw error;
    }
  });
  if (!result.ok) {
    if (result.wrong) throw wrongCode();
    if (result.locked) throw tooManyWrongCodes(ctx);
    // The session was revoked or expired meanwhile: it cannot be raised.
    throw fail.invalidGrant();
  }
  return issueAccessToken(ctx, result.value);
}

async function raise(ctx: AuthContext, userId: string, sessionId: string, code: string) {
  const now = ctx.now();
  return ctx.db.$transaction(async (tx) => {
    const family = await tx.refreshFamily.findFirst({ where: { id: sessionId, userId, revokedAt: null, absoluteExpiresAt: { gt: now } } });
    if (!family) return null;
    const source = await spendCode(tx, userId, code, now, twoFactorKeys(ctx.config));
    if (source === null) throw new WrongCode();
    const amr = JSON.stringify(mergeAmr(parseAmr(family.amr), [...METHODS[source]]));
    // Conditional on the amr read above: a concurrent step-up's union is never overwritten.
    const { count } = await tx.refreshFamily.updateMany({
      where: { id: family.id, revokedAt: null, amr: family.amr },
      data: { amr, twoFactorSource: source, twoFactorAt: now },
    });
    if (count !== 1) return null;
    return { ...family, amr, twoFactorSource: source, twoFactorAt: now };
  });
}
