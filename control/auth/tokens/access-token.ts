/**
 * Access tokens of a session (refresh family). Profile claims are re-read from the user and the
 * credential on every issue, refresh included, so a changed name or a lost/verified address shows
 * in the next token; session claims (amr, auth_time, 2FA) come from the family, where they only
 * grow (login-service.md "Claims of a locally issued access token").
 */
import { randomUUID } from "node:crypto";
import type { JWTPayload } from "jose";
import type { Db } from "../../db/client.ts";
import type { AuthContext } from "../context.ts";
import { accessTokenAudience } from "./audience.ts";
import { signingKeysFor } from "./keys.ts";

/** The session facts an access token is minted from (a RefreshFamily row has all of them). */
export interface SessionFacts {
  id: string;
  userId: string;
  amr: string;
  authTime: Date;
  twoFactorSource: string | null;
  twoFactorAt: Date | null;
  securityStamp: string;
}

export interface IssuedAccessToken {
  token: string;
  /** Seconds until expiry (`expires_in`). */
  expiresIn: number;
}

type Reader = Pick<Db, "user" | "totpEnrollment" | "passkey">;

const seconds = (d: Date): number => Math.floor(d.getTime() / 1000);

export function parseAmr(stored: string): string[] {
  try {
    const value: unknown = JSON.parse(stored);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  } catch {
    return [];
  }
}

/** Union keeping first-seen order: `amr` only grows (login-service.md claims table). */
export function mergeAmr(...lists: readonly string[][]): string[] {
  return [...new Set(lists.flat())];
}

export async function accessTokenClaims(ctx: AuthContext, session: SessionFacts, db: Reader = ctx.db): Promise<JWTPayload> {
  const user = await db.user.findUnique({ where: { id: session.userId }, include: { credential: true } });
  if (!user) throw new Error(`user ${session.userId} of session ${session.id} no longer exists`);
  const credential = user.credential;
  const claims: JWTPayload = {
    sub: user.id,
    preferred_username: credential?.userName ?? user.externalHandle ?? undefined,
    name: user.name ?? undefined,
    // Only a proven address: an unverified one may be somebody else's (Account rule 2).
    email: credential?.email && credential.emailConfirmedAt ? credential.email : undefined,
    amr: parseAmr(session.amr),
    toa_stamp: session.securityStamp,
    toa_sid: session.id,
    auth_time: seconds(session.authTime),
  };
  if (session.twoFactorSource !== null && session.twoFactorAt !== null) {
    claims.toa_2fa_source = session.twoFactorSource;
    claims.toa_2fa_at = seconds(session.twoFactorAt);
  }
  if (ctx.config.TwoFactor.Enabled && ctx.config.TwoFactor.Enforce) {
    // A confirmed TOTP or a registered passkey is an enrolment (a passkey also triggers the challenge).
    const totp = await db.totpEnrollment.findUnique({ where: { userId: user.id }, select: { confirmedAt: true } });
    if (!totp?.confirmedAt && (await db.passkey.count({ where: { userId: user.id } })) === 0) claims.toa_2fa_required = true;
  }
  for (const key of Object.keys(claims)) if (claims[key] === undefined) delete claims[key];
  return claims;
}

export async function issueAccessToken(ctx: AuthContext, session: SessionFacts, db: Reader = ctx.db): Promise<IssuedAccessToken> {
  const claims = await accessTokenClaims(ctx, session, db);
  const keys = await signingKeysFor(ctx.config);
  const now = ctx.now();
  const lifetimeSec = Math.floor(ctx.config.LocalLogin.AccessTokenLifetime / 1000);
  const token = await keys.sign({
    ...claims,
    iss: ctx.config.LocalLogin.Issuer,
    aud: accessTokenAudience(ctx.config),
    iat: seconds(now),
    exp: seconds(now) + lifetimeSec,
    jti: randomUUID(),
  });
  return { token, expiresIn: lifetimeSec };
}
