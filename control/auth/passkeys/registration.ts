/**
 * Registering a passkey for the signed-in user. The options' challenge is stored (hashed is not
 * needed: it is no credential, only a nonce) with an expiry of `TwoFactor:ChallengeLifetime`, and
 * deleted by the verification that uses it (a conditional delete checked by row count), so one
 * ceremony registers at most one credential and a captured attestation cannot be replayed.
 */
import { randomUUID } from "node:crypto";
import { generateRegistrationOptions, verifyRegistrationResponse, type PublicKeyCredentialCreationOptionsJSON, type RegistrationResponseJSON } from "@simplewebauthn/server";
import { decodeClientDataJSON, isoBase64URL } from "@simplewebauthn/server/helpers";
import type { AuthContext } from "../context.ts";
import { isUniqueViolation } from "../../db/client.ts";
import { fail } from "../../http/errors.ts";
import { parseTransports, relyingParty, USER_VERIFICATION } from "./relying-party.ts";
import { isoWithOffset } from "../../../shared/timestamp.ts";

export async function registrationOptions(ctx: AuthContext, userId: string): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const user = await ctx.db.user.findUniqueOrThrow({ where: { id: userId }, include: { credential: true, passkeys: true } });
  const rp = relyingParty(ctx.config);
  const options = await generateRegistrationOptions({
    rpName: rp.rpName,
    rpID: rp.rpID,
    // The user handle is the opaque id, never a name or address (it is stored on the authenticator).
    userID: isoBase64URL.toBuffer(isoBase64URL.fromUTF8String(user.id)),
    userName: user.credential?.userName ?? user.externalHandle ?? user.email ?? user.id,
    attestationType: "none",
    excludeCredentials: user.passkeys.map((p) => ({ id: p.credentialId, transports: parseTransports(p.transports) })),
    authenticatorSelection: { residentKey: "preferred", userVerification: USER_VERIFICATION },
  });
  const now = ctx.now();
  await ctx.db.webAuthnChallenge.create({
    data: { id: randomUUID(), userId, challenge: options.challenge, createdAt: now, expiresAt: new Date(now.getTime() + ctx.config.TwoFactor.ChallengeLifetime) },
  });
  return options;
}

export interface PasskeySummary {
  id: string;
  label: string;
  createdAt: string;
  lastUsedAt: string | null;
}

export async function registerPasskey(ctx: AuthContext, userId: string, response: RegistrationResponseJSON, label: string | null | undefined): Promise<PasskeySummary> {
  const refused = () => fail.badRequest("The passkey could not be registered. Start again.");
  let challenge: string;
  try {
    challenge = decodeClientDataJSON(response.response.clientDataJSON).challenge;
  } catch {
    throw refused();
  }
  const now = ctx.now();
  const { count } = await ctx.db.webAuthnChallenge.deleteMany({ where: { userId, challenge, expiresAt: { gt: now } } });
  if (count < 1) throw refused();
  const rp = relyingParty(ctx.config);
  let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verification = await verifyRegistrationResponse({ response, expectedChallenge: challenge, expectedOrigin: rp.origins, expectedRPID: rp.rpID, requireUserVerification: false });
  } catch (error) {
    ctx.logger.info({ userId, err: error }, "passkey registration refused");
    throw refused();
  }
  if (!verification.verified) throw refused();
  const { credential } = verification.registrationInfo;
  try {
    const row = await ctx.db.passkey.create({
      data: {
        id: randomUUID(),
        userId,
        credentialId: credential.id,
        publicKey: isoBase64URL.fromBuffer(credential.publicKey),
        counter: credential.counter,
        transports: JSON.stringify(credential.transports ?? []),
        label: label ?? null,
        createdAt: now,
      },
    });
    return { id: row.id, label: row.label ?? "", createdAt: isoWithOffset(row.createdAt), lastUsedAt: null };
  } catch (error) {
    if (isUniqueViolation(error)) throw fail.conflict("This passkey is already registered.");
    throw error;
  }
}

export async function listPasskeys(ctx: AuthContext, userId: string): Promise<PasskeySummary[]> {
  const rows = await ctx.db.passkey.findMany({ where: { userId }, orderBy: { createdAt: "asc" } });
  return rows.map((p) => ({ id: p.id, label: p.label ?? "", createdAt: isoWithOffset(p.createdAt), lastUsedAt: p.lastUsedAt ? isoWithOffset(p.lastUsedAt) : null }));
}

/**
 * False for an unknown or foreign id (both 404: Account rule 15's reasoning). In the same
 * transaction every device trusted through this passkey is un-trusted: a cached second factor
 * must not outlive the factor it caches.
 */
export async function deletePasskey(ctx: AuthContext, userId: string, id: string): Promise<boolean> {
  const now = ctx.now();
  const untrusted = await ctx.db.$transaction(async (tx) => {
    const { count } = await tx.passkey.deleteMany({ where: { id, userId } });
    if (count !== 1) return null;
    const devices = await tx.trustedDevice.updateMany({ where: { userId, passkeyId: id, revokedAt: null }, data: { revokedAt: now, revokeReason: "passkey-deleted" } });
    return devices.count;
  });
  if (untrusted === null) return false;
  ctx.logger.info({ userId, passkeyId: id, untrustedDevices: untrusted }, "passkey deleted");
  return true;
}
