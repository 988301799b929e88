/**
 * A passkey as the second factor of a sign-in challenge. The WebAuthn challenge is stored on the
 * TwoFactorChallenge row, so it dies with it (single use, attempt cap, lifetime). The assertion is
 * verified inside the transaction that consumes the sign-in challenge (twofactor/challenge.ts),
 * and the signature counter moves by a conditional update on the old value: an assertion whose
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

/** Inside the consuming transaction: true when the assertion proves a passkey of the user. */
export async function provePasskey(ctx: AuthContext, tx: Tx, challenge: TwoFactorChallenge, response: AuthenticationResponseJSON, now: Date): Promise<boolean> {
  const current = await tx.twoFactorChallenge.findUnique({ where: { id: challenge.id }, select: { webAuthnChallenge: true } });
  const expectedChallenge = current?.webAuthnChallenge;
  if (!expectedChallenge) return false;
  const passkey = await tx.passkey.findUnique({ where: { credentialId: response.id } });
  if (!passkey || passkey.userId !== challenge.userId) return false;
  const rp = relyingParty(ctx.config);
  let newCounter: number;
  try {
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.rpID,
      requireUserVerification: false,
      credential: { id: passkey.credentialId, publicKey: isoBase64URL.toBuffer(passkey.publicKey), counter: passkey.counter, transports: parseTransports(passkey.transports) },
    });
    if (!result.verified) return false;
    newCounter = result.authenticationInfo.newCounter;
  } catch (error) {
    ctx.logger.info({ userId: challenge.userId, passkeyId: passkey.id, err: error }, "passkey assertion refused");
    return false;
  }
  const { count } = await tx.passkey.updateMany({ where: { id: passkey.id, counter: passkey.counter }, data: { counter: newCounter, lastUsedAt: now } });
  return count === 1;
}
