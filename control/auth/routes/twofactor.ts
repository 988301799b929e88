/**
 * {prefix}/2fa (decisions.md "Auth decisions"): TOTP enrolment and confirmation, recovery codes,
 * turning two-factor off, step-up of the current session, and the anonymous answer to a sign-in
 * challenge. Every route that takes a code draws from the shared per-address rate limit; wrong
 * codes also spend the account's lockout budget (twofactor/proof.ts).
 */
import { z } from "zod";
import { fail } from "../../http/errors.ts";
import { mountRoute } from "../../http/route.ts";
import { principalOf, requireBearer } from "../bearer/index.ts";
import type { AuthRouteDeps } from "../feature.ts";
import { authRateLimit } from "../rate-limit/index.ts";
import { tokenPairSchema } from "../sign-in/token-pair.ts";
import { redeemChallenge } from "../twofactor/challenge.ts";
import { startEnrolment } from "../twofactor/enrolment.ts";
import { finishLiveSecondFactor } from "../twofactor/finish.ts";
import { confirmEnrolment, disableTwoFactor, regenerateRecoveryCodes } from "../twofactor/manage.ts";
import { spendCode } from "../twofactor/proof.ts";
import { twoFactorKeys } from "../twofactor/secret-keys.ts";
import { stepUp } from "../twofactor/step-up.ts";
import { DEVICE_LABEL_MAX } from "../devices/trust.ts";
import { currentPasswordField, requireFactorChangeProof } from "../twofactor/change-proof.ts";

/** Codes are 6 digits or 11-character recovery codes; anything longer is refused unread. */
const CODE_MAX = 64;
const code = z.string({ error: "Enter the code." }).min(1, "Enter the code.").max(CODE_MAX, "This is not a valid code.");
const codeBody = z.object({ code });
/** Enrolment and confirmation also take the proof of presence (twofactor/change-proof.ts). */
const enrolBody = z.object({ currentPassword: currentPasswordField }).default({});
const confirmBody = z.object({ code, currentPassword: currentPasswordField });

const CHALLENGE_MAX = 512;

/**
 * On the anonymous answer to a challenge an empty, oversized, missing or ill-typed challenge or
 * code is a credential that does not match: the collapsed 401 (decisions.md lists only 200 and 401
 * for /2fa/verify), unread. An ill-typed `rememberDevice` or an oversized label is still 400: a
 * setting the person can correct, not a credential.
 */
const verifyBody = z.object({
  // Missing or ill-typed, like empty: no challenge or code to check, the collapsed 401.
  challenge: z.string().catch(""),
  code: z.string().catch(""),
  rememberDevice: z.boolean().optional().default(false),
  deviceLabel: z.string().max(DEVICE_LABEL_MAX, `The device label must be at most ${DEVICE_LABEL_MAX} characters.`).nullish(),
});

const recoveryCodes = z.object({ recoveryCodes: z.array(z.string()) });

/** The account lockout (or the per-address rate limit) refused the code unchecked. */
const LOCKED = "Account locked after too many wrong codes, or too many attempts from this address (`errors`, `Retry-After`)";

export function twoFactorRoutes({ ctx, target }: AuthRouteDeps): void {
  if (!ctx.config.TwoFactor.Enabled) return;
  const bearer = requireBearer(ctx);
  const limit = authRateLimit(ctx);

  mountRoute(target, {
    method: "post",
    path: "/2fa/verify",
    family: "auth",
    tag: "two-factor",
    summary: "Answer a sign-in challenge with a TOTP or recovery code (optionally trusting this device)",
    body: verifyBody,
    before: [limit],
    responses: { 200: { description: "Token pair", schema: tokenPairSchema }, 401: { description: "Challenge or code not accepted" } },
    handler: async ({ req, res, body }) => {
      const unusable = body.challenge === "" || body.challenge.length > CHALLENGE_MAX || body.code.trim() === "" || body.code.length > CODE_MAX;
      if (unusable) throw fail.invalidGrant();
      const redeemed = await redeemChallenge(ctx, body.challenge, {
        verify: async () => true,
        spend: (tx, challenge, now) => spendCode(tx, challenge.userId, body.code, now, twoFactorKeys(ctx.config)),
      });
      if (!redeemed) {
        ctx.logger.info("two-factor challenge answer refused");
        throw fail.invalidGrant();
      }
      res.json(
        await finishLiveSecondFactor(ctx, {
          challenge: redeemed.challenge,
          source: redeemed.proof,
          req,
          rememberDevice: body.rememberDevice,
          deviceLabel: body.deviceLabel,
        }),
      );
    },
  });

  mountRoute(target, {
    method: "post",
    path: "/2fa/totp/enroll",
    family: "auth",
    tag: "two-factor",
    summary: "Start a TOTP enrolment: a new secret, pending until confirmed (replaces a pending one); needs `currentPassword` or a fresh second factor",
    security: "bearer",
    body: enrolBody,
    before: [bearer, limit],
    responses: {
      200: { description: "The secret and its otpauth URI", schema: z.object({ secret: z.string(), otpauthUri: z.string() }) },
      400: { description: "No proof of presence (`errors`)" },
      409: { description: "Two-factor is already on" },
    },
    handler: async ({ req, res, body }) => {
      const principal = principalOf(req);
      await requireFactorChangeProof(ctx, principal, body.currentPassword);
      res.json(await startEnrolment(ctx, principal.userId));
    },
  });

  mountRoute(target, {
    method: "post",
    path: "/2fa/totp/confirm",
    family: "auth",
    tag: "two-factor",
    summary: "Confirm the pending enrolment with a code; answers ten recovery codes; needs `currentPassword` or a fresh second factor",
    security: "bearer",
    body: confirmBody,
    before: [bearer, limit],
    responses: {
      200: { description: "Recovery codes (shown once)", schema: recoveryCodes },
      400: { description: "Wrong code, no enrolment or no proof of presence" },
      409: { description: "Two-factor is already on (a racing confirmation won)" },
      429: { description: LOCKED },
    },
    handler: async ({ req, res, body }) => {
      const principal = principalOf(req);
      await requireFactorChangeProof(ctx, principal, body.currentPassword);
      res.json({ recoveryCodes: await confirmEnrolment(ctx, principal.userId, body.code) });
    },
  });

  mountRoute(target, {
    method: "post",
    path: "/2fa/recovery-codes",
    family: "auth",
    tag: "two-factor",
    summary: "Replace the recovery codes (earlier ones stop working)",
    security: "bearer",
    body: codeBody,
    before: [bearer, limit],
    responses: { 200: { description: "New recovery codes (shown once)", schema: recoveryCodes }, 400: { description: "Wrong code" }, 429: { description: LOCKED } },
    handler: async ({ req, res, body }) => {
      res.json({ recoveryCodes: await regenerateRecoveryCodes(ctx, principalOf(req).userId, body.code) });
    },
  });

  mountRoute(target, {
    method: "delete",
    path: "/2fa",
    family: "auth",
    tag: "two-factor",
    summary: "Turn two-factor off (un-trusts every device)",
    security: "bearer",
    body: codeBody,
    before: [bearer, limit],
    responses: { 204: { description: "Two-factor is off" }, 400: { description: "Wrong code" }, 429: { description: LOCKED } },
    handler: async ({ req, res, body }) => {
      await disableTwoFactor(ctx, principalOf(req).userId, body.code);
      res.status(204).end();
    },
  });

  mountRoute(target, {
    method: "post",
    path: "/2fa/step-up",
    family: "auth",
    tag: "two-factor",
    summary: "Prove a live code again: a new access token for the same session",
    security: "bearer",
    body: codeBody,
    before: [bearer, limit],
    responses: {
      200: { description: "Access token", schema: z.object({ access_token: z.string(), token_type: z.literal("Bearer"), expires_in: z.number().int() }) },
      400: { description: "Wrong code" },
      401: { description: "The session was signed out or expired meanwhile (`invalid_grant`)" },
      429: { description: LOCKED },
    },
    handler: async ({ req, res, body }) => {
      const access = await stepUp(ctx, principalOf(req), body.code);
      res.json({ access_token: access.token, token_type: "Bearer", expires_in: access.expiresIn });
    },
  });
}
