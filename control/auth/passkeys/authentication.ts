/**
 * A passkey as the second factor of a sign-in challenge. The WebAuthn challenge is stored on the
 * TwoFactorChallenge row, so it dies with it (single use, attempt cap, lifetime). The assertion is
 * verified before the transaction that consumes the sign-in challenge (twofactor/challenge.ts),
 * which then moves the signature counter by a conditional update on the old value: an assertion whose
 * counter does not exceed the stored one (a cloned authenticator, or a replay) is refused.
 */
import { generateAuthenticationOptions, verifyAuthenticationResponse, type AuthenticationResponseJSON, type PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import { isoBase64URL } from "@simplewebauthn/server/helpers";
import type { TwoFactorChallenge } from "../../../prisma/generated/sqlite/client.ts";
import type { AuthContext } from "../context.ts";
import type { Tx } from "../twofactor/tx.ts";
import { parseTransports, relyingParty, USER_VERIFICATION } from "./relying-party.ts";

/** Options for the challenge's user; null when the challenge is not live or the user has no passkey. */
export async function assertionOptions(ctx: AuthContext, challenge: TwoFactorChallenge): Promise<PublicKeyCredentialRequestOptionsJSON | null> {
  const passkeys = await ctx.db.passkey.findMany({ where: { userId: challenge.userId } });
  if (passkeys.length === 0) return null;
  const options = await generateAuthenticationOptions({
    rpID: relyingParty(ctx.config).rpID,
    allowCredentials: passkeys.map((p) => ({ id: p.credentialId, transports: parseTransports(p.transports) })),
    userVerification: USER_VERIFICATION,
  });
  const { count } = await ctx.db.twoFactorChallenge.updateMany({ where: { id: challenge.id, consumedAt: null }, data: { webAuthnChallenge: options.challenge } });
  return count === 1 ? options : null;
}

export interface VerifiedAssertion {
  passkeyId: string;
  /** The stored counter the assertion was checked against, and the one it reports. */
  oldCounter: number;
  newCounter: number;
  /** The WebAuthn challenge the assertion signed. */
  webAuthnChallenge: string;
}

/**
 * Before any transaction: true-ish when the assertion proves a passkey of the challenge's user.
 * The signature check is not database work, so it must not run while a transaction holds the
 * connection (issue #14: a failing check rolled back other requests' writes on SQLite).
 */
export async function verifyPasskeyAssertion(ctx: AuthContext, challenge: TwoFactorChallenge, response: AuthenticationResponseJSON): Promise<VerifiedAssertion | null> {
  const current = await ctx.db.twoFactorChallenge.findUnique({ where: { id: challenge.id }, select: { webAuthnChallenge: true } });
  const expectedChallenge = current?.webAuthnChallenge;
  if (!expectedChallenge) return null;
  const passkey = await ctx.db.passkey.findUnique({ where: { credentialId: response.id } });
  if (!passkey || passkey.userId !== challenge.userId) return null;
  const rp = relyingParty(ctx.config);
  try {
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.rpID,
      requireUserVerification: false,
      credential: { id: passkey.credentialId, publicKey: isoBase64URL.toBuffer(passkey.publicKey), counter: passkey.counter, transports: parseTransports(passkey.transports) },
    });
    if (!result.verified) return null;
    return { passkeyId: passkey.id, oldCounter: passkey.counter, newCounter: result.authenticationInfo.newCounter, webAuthnChallenge: expectedChallenge };
  } catch (error) {
    ctx.logger.info({ userId: challenge.userId, passkeyId: passkey.id, err: error }, "passkey assertion refused");
    return null;
  }
}

/**
 * Inside the consuming transaction, database only: the challenge still expects the signed WebAuthn
 * challenge (a newer options call replaces it) and the counter moves from the value checked.
 */
export async function spendPasskeyAssertion(tx: Tx, challenge: TwoFactorChallenge, verified: VerifiedAssertion, now: Date): Promise<boolean> {
  const still = await tx.twoFactorChallenge.count({ where: { id: challenge.id, webAuthnChallenge: verified.webAuthnChallenge } });
  if (still !== 1) return false;
  const { count } = await tx.passkey.updateMany({
    where: { id: verified.passkeyId, userId: challenge.userId, counter: verified.oldCounter },
    data: { counter: verified.newCounter, lastUsedAt: now },
  });
  return count === 1;
}
