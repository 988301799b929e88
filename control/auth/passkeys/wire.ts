/**
 * Request shapes of the WebAuthn ceremonies (the JSON that browsers' `toJSON()` and
 * @simplewebauthn/browser produce). Bounded fields: these arrive on anonymous endpoints too.
 */
import { z } from "zod";
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server";

const b64u = z.string().max(16_384).regex(/^[A-Za-z0-9_-]*={0,2}$/, "not base64url");
const transports = z.array(z.enum(["ble", "cable", "hybrid", "internal", "nfc", "smart-card", "usb"])).max(8);
const attachment = z.enum(["platform", "cross-platform"]);

export const registrationResponse = z.object({
  id: b64u,
  rawId: b64u,
  type: z.literal("public-key"),
  response: z.object({
    clientDataJSON: b64u,
    attestationObject: b64u,
    authenticatorData: b64u.optional(),
    transports: transports.optional(),
    publicKeyAlgorithm: z.number().int().optional(),
    publicKey: b64u.optional(),
  }),
  authenticatorAttachment: attachment.optional(),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
}) satisfies z.ZodType<RegistrationResponseJSON>;

export const authenticationResponse = z.object({
  id: b64u,
  rawId: b64u,
  type: z.literal("public-key"),
  response: z.object({
    clientDataJSON: b64u,
    authenticatorData: b64u,
    signature: b64u,
    userHandle: b64u.optional(),
  }),
  authenticatorAttachment: attachment.optional(),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
}) satisfies z.ZodType<AuthenticationResponseJSON>;
