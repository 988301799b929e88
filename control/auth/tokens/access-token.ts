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

/**
 * What the profile claims are computed from: the user, its password credential and (only when
 * enforcement needs it) whether a second factor is enrolled. Read through Prisma here; the refresh
 * hot path reads the same facts in the same query as the token (tokens/refresh-store.ts).
 */
export interface ClaimsProfile {
  id: string;
  name: string | null;
  externalHandle: string | null;
  credential: { userName: string; email: string | null; emailConfirmedAt: Date | null } | null;
  /** A confirmed TOTP or a registered passkey; may be left out when enforcement is off. */
  twoFactorEnrolled?: boolean;
}

const enforcesTwoFactor = (ctx: AuthContext): boolean => ctx.config.TwoFactor.Enabled && ctx.config.TwoFactor.Enforce;

export async function readClaimsProfile(ctx: AuthContext, session: SessionFacts, db: Reader = ctx.db): Promise<ClaimsProfile> {
  const user = await db.user.findUnique({ where: { id: session.userId }, include: { credential: true } });
  if (!user) throw new Error(`user ${session.userId} of session ${session.id} no longer exists`);
  const profile: ClaimsProfile = { id: user.id, name: user.name, externalHandle: user.externalHandle, credential: user.credential };
  if (enforcesTwoFactor(ctx)) {
    // A confirmed TOTP or a registered passkey is an enrolment (a passkey also triggers the challenge).
    const totp = await db.totpEnrollment.findUnique({ where: { userId: user.id }, select: { confirmedAt: true } });
    profile.twoFactorEnrolled = Boolean(totp?.confirmedAt) || (await db.passkey.count({ where: { userId: user.id } })) > 0;
  }
  return profile;
}

export function claimsFor(ctx: AuthContext, session: SessionFacts, profile: ClaimsProfile): JWTPayload {
  const credential = profile.credential;
  const claims: JWTPayload = {
    sub: profile.id,
    preferred_username: credential?.userName ?? profile.externalHandle ?? undefined,
    // The claims table lists `name` without a condition (unlike `email`): an account with no
    // display name from a provider is named by its handle, as ASP.NET Identity's Name claim is.
    name: profile.name ?? credential?.userName ?? profile.externalHandle ?? undefined,
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
  if (enforcesTwoFactor(ctx) && profile.twoFactorEnrolled !== true) claims.toa_2fa_required = true;
  for (const key of Object.keys(claims)) if (claims[key] === undefined) delete claims[key];
  return claims;
}

export async function accessTokenClaims(ctx: AuthContext, session: SessionFacts, db: Reader = ctx.db): Promise<JWTPayload> {
  return claimsFor(ctx, session, await readClaimsProfile(ctx, session, db));
}

export async function issueAccessToken(ctx: AuthContext, session: SessionFacts, db: Reader = ctx.db): Promise<IssuedAccessToken> {
  return signAccessToken(ctx, await accessTokenClaims(ctx, session, db));
}

/** As issueAccessToken, from a profile already read (the refresh hot path). */
export function issueAccessTokenFrom(ctx: AuthContext, session: SessionFacts, profile: ClaimsProfile): Promise<IssuedAccessToken> {
  return signAccessToken(ctx, claimsFor(ctx, session, profile));
}

async function signAccessToken(ctx: AuthContext, claims: JWTPayload): Promise<IssuedAccessToken> {
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
