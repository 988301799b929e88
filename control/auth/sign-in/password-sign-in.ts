/**
 * The password step of sign-in. Returns a `SignInResult`: either "password verified" (which the
 * caller turns into tokens with completeSignIn, or into a two-factor challenge) or a refusal with
 * its cause. The cause is for logs and service-layer callers only; on the wire every refusal is
 * the same 401 (Sign-in rule 2).
 *
 * Every path does one hash verification: an unknown user is checked against a dummy hash and a
 * locked account's guess against its real hash (result ignored), so the work done does not tell
 * the cases apart; the route pads every refusal to SignInRefusalFloor on top of that.
 */
import type { AuthContext } from "../context.ts";
import { findSignInCredential } from "./find-credential.ts";
import { recordFailure, recordSuccess, reserveAttempt } from "./lockout.ts";

export type SignInResult =
  | { outcome: "verified"; userId: string; amr: string[]; authTime: Date; stamp: string }
  | { outcome: "refused"; reason: "unknown-user" | "invalid-password" | "locked-out"; userId: string | null };

const dummyHashes = new WeakMap<AuthContext["hasher"], Promise<string>>();

/** A real hash under the current settings, so verifying it costs what a real verify costs. */
function dummyHash(ctx: AuthContext): Promise<string> {
  let hash = dummyHashes.get(ctx.hasher);
  if (!hash) {
    hash = ctx.hasher.hash("dummy password for timing equalisation");
    dummyHashes.set(ctx.hasher, hash);
  }
  return hash;
}

export async function verifyPasswordSignIn(ctx: AuthContext, identifier: string, password: string): Promise<SignInResult> {
  const credential = await findSignInCredential(ctx.signIn, identifier);
  if (!credential) {
    await ctx.hasher.verify(password, await dummyHash(ctx));
    return { outcome: "refused", reason: "unknown-user", userId: null };
  }
  const userId = credential.userId;
  if (!(await reserveAttempt(ctx, userId))) {
    await ctx.hasher.verify(password, credential.passwordHash);
    return { outcome: "refused", reason: "locked-out", userId };
  }
  const { ok, needsRehash } = await ctx.hasher.verify(password, credential.passwordHash);
  if (!ok) {
    await recordFailure(ctx, userId);
    return { outcome: "refused", reason: "invalid-password", userId };
  }
  await recordSuccess(ctx, userId);
  if (needsRehash) await rehash(ctx, userId, credential.passwordHash, password);
  // The stamp read with the hash: the session or challenge is refused if it has moved since.
  return { outcome: "verified", userId, amr: ["pwd"], authTime: ctx.now(), stamp: credential.securityStamp };
}

/**
 * Upgrades a hash made under a retired pepper or weaker parameters. Conditional on the old hash so
 * a password change racing this sign-in is never overwritten with the old password.
 */
async function rehash(ctx: AuthContext, userId: string, oldHash: string, password: string): Promise<void> {
  try {
    const passwordHash = await ctx.hasher.hash(password);
    const { count } = await ctx.db.passwordCredential.updateMany({ where: { userId, passwordHash: oldHash }, data: { passwordHash } });
    if (count === 1) ctx.logger.info({ userId }, "password hash upgraded to the current parameters");
  } catch (error) {
    ctx.logger.error({ err: error, userId }, "password re-hash failed; the old hash stays valid");
  }
}
