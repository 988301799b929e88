/**
 * Passkeys (decisions.md: register, list, delete, and use as a second factor):
 * - {prefix}/passkeys/registration/options and /verify (bearer): the WebAuthn creation ceremony;
 * - GET {prefix}/passkeys, DELETE {prefix}/passkeys/{id} (bearer; unknown and foreign ids 404);
 * - {prefix}/2fa/passkey/options and /verify (anonymous, holding a sign-in challenge): the
 *   assertion ceremony answering the challenge (`toa_2fa_source` = "passkey").
 * Registering or deleting a passkey changes a second factor, so it needs proof of presence
 * (`currentPassword`, or a fresh second factor when one is enrolled; 400 `{errors}` otherwise): a
 * stolen access token alone can neither plant the thief's passkey nor remove the owner's. Deleting a
 * passkey also un-trusts the devices that were trusted through it.
 */
import { z } from "zod";
import { fail } from "../../http/errors.ts";
import { mountRoute } from "../../http/route.ts";
import { principalOf, requireBearer } from "../bearer/index.ts";
import { DEVICE_LABEL_MAX } from "../devices/trust.ts";
import type { AuthRouteDeps } from "../feature.ts";
import { assertionOptions, spendPasskeyAssertion, verifyPasskeyAssertion } from "../passkeys/authentication.ts";
import { deletePasskey, listPasskeys, registerPasskey, registrationOptions } from "../passkeys/registration.ts";
import { authenticationResponse, registrationResponse } from "../passkeys/wire.ts";
import { authRateLimit } from "../rate-limit/index.ts";
import { tokenPairSchema } from "../sign-in/token-pair.ts";
import { findLiveChallenge, redeemChallenge } from "../twofactor/challenge.ts";
import { finishLiveSecondFactor } from "../twofactor/finish.ts";
import { currentPasswordField, requireFactorChangeProof } from "../twofactor/change-proof.ts";

const label = z.string().max(DEVICE_LABEL_MAX, `The label must be at most ${DEVICE_LABEL_MAX} characters.`).nullish();
const challenge = z.string({ error: "Send the challenge." }).min(1, "Send the challenge.").max(512, "This is not a challenge.");
const summary = z.object({ id: z.string(), label: z.string(), createdAt: z.string(), lastUsedAt: z.string().nullable() });
const options = z.record(z.string(), z.unknown());

/** Registering and deleting a passkey take the proof of presence (twofactor/change-proof.ts). */
const proofBody = z.object({ currentPassword: currentPasswordField }).default({});

export function passkeyRoutes({ ctx, target }: AuthRouteDeps): void {
  if (!ctx.config.Passkeys.Enabled) return;
  const bearer = requireBearer(ctx);
  const limit = authRateLimit(ctx);

  mountRoute(target, {
    method: "post",
    path: "/passkeys/registration/options",
    family: "auth",
    tag: "passkeys",
    summary: "Start registering a passkey: WebAuthn creation options (needs `currentPassword` or a fresh second factor)",
    security: "bearer",
    body: proofBody,
    before: [bearer, limit],
    responses: { 200: { description: "PublicKeyCredentialCreationOptionsJSON", schema: options }, 400: { description: "No proof of presence (`errors`)" } },
    handler: async ({ req, res, body }) => {
      const principal = principalOf(req);
      await requireFactorChangeProof(ctx, principal, body.currentPassword);
      res.json(await registrationOptions(ctx, principal.userId));
    },
  });

  mountRoute(target, {
    method: "post",
    path: "/passkeys/registration/verify",
    family: "auth",
    tag: "passkeys",
    summary: "Finish registering a passkey with the authenticator's response",
    security: "bearer",
    body: z.object({ response: registrationResponse, label, currentPassword: currentPasswordField }),
    before: [bearer, limit],
    responses: { 201: { description: "Registered", schema: summary }, 400: { description: "Response not accepted, or no proof of presence" } },
    handler: async ({ req, res, body }) => {
      const principal = principalOf(req);
      await requireFactorChangeProof(ctx, principal, body.currentPassword);
      res.status(201).json(await registerPasskey(ctx, principal.userId, body.response, body.label));
    },
  });

  mountRoute(target, {
    method: "get",
    path: "/passkeys",
    family: "auth",
    tag: "passkeys",
    summary: "List the caller's passkeys",
    security: "bearer",
    before: [bearer],
    responses: { 200: { description: "Passkeys", schema: z.array(summary) } },
    handler: async ({ req, res }) => {
      res.json(await listPasskeys(ctx, principalOf(req).userId));
    },
  });

  mountRoute(target, {
    method: "delete",
    path: "/passkeys/:id",
    family: "auth",
    tag: "passkeys",
    summary: "Delete one of the caller's passkeys (needs `currentPassword` or a fresh second factor; un-trusts the devices trusted through it)",
    security: "bearer",
    body: proofBody,
    before: [bearer, limit],
    responses: { 204: { description: "Deleted" }, 400: { description: "No proof of presence (`errors`)" }, 404: { description: "No such passkey of the caller" } },
    handler: async ({ req, res, params, body }) => {
      const principal = principalOf(req);
      await requireFactorChangeProof(ctx, principal, body.currentPassword);
      if (!(await deletePasskey(ctx, principal.userId, params.id ?? ""))) throw fail.notFound();
      res.status(204).end();
    },
  });

  if (!ctx.config.TwoFactor.Enabled) return;

  mountRoute(target, {
    method: "post",
    path: "/2fa/passkey/options",
    family: "auth",
    tag: "two-factor",
    summary: "WebAuthn request options to answer a sign-in challenge with a passkey",
    body: z.object({ challenge }),
    before: [limit],
    responses: { 200: { description: "PublicKeyCredentialRequestOptionsJSON", schema: options }, 401: { description: "Challenge not accepted" } },
    handler: async ({ res, body }) => {
      const live = await findLiveChallenge(ctx, body.challenge);
      const opts = live ? await assertionOptions(ctx, live) : null;
      if (!opts) throw fail.invalidGrant();
      res.json(opts);
    },
  });

  mountRoute(target, {
    method: "post",
    path: "/2fa/passkey/verify",
    family: "auth",
    tag: "two-factor",
    summary: "Answer a sign-in challenge with a passkey assertion (optionally trusting this device)",
    body: z.object({ challenge, response: authenticationResponse, rememberDevice: z.boolean().optional().default(false), deviceLabel: label }),
    before: [limit],
    responses: { 200: { description: "Token pair", schema: tokenPairSchema }, 401: { description: "Challenge or assertion not accepted" } },
    handler: async ({ req, res, body }) => {
      const redeemed = await redeemChallenge(ctx, body.challenge, {
        verify: (row) => verifyPasskeyAssertion(ctx, row, body.response),
        spend: async (tx, row, now, verified) => ((await spendPasskeyAssertion(tx, row, verified, now)) ? verified.passkeyId : null),
      });
      if (!redeemed) throw fail.invalidGrant();
      const { challenge: row, proof: passkeyId } = redeemed;
      res.json(await finishLiveSecondFactor(ctx, { challenge: row, source: "passkey", passkeyId, req, rememberDevice: body.rememberDevice, deviceLabel: body.deviceLabel }));
    },
  });
}
