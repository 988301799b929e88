/**
 * The five delivery hooks (login-service.md Events, decisions.md Delivery hooks): the hook's name
 * in a DeliveryHooks object, the `kind` written by transports, and the link template of each.
 */
import type { Config } from "../../config/index.ts";
import type { DeliveryHooks } from "../../app/host.ts";

export type HookName = keyof DeliveryHooks;
export type HookKind = "password-reset" | "email-verification" | "magic-link" | "admin-password-issued" | "invitation";
export type LinkKind = Exclude<HookKind, "admin-password-issued">;

export const HOOK_KINDS: Record<HookName, HookKind> = {
  passwordReset: "password-reset",
  emailVerification: "email-verification",
  magicLink: "magic-link",
  adminPasswordIssued: "admin-password-issued",
  invitation: "invitation",
};

export const HOOK_NAMES = Object.keys(HOOK_KINDS) as HookName[];

const TEMPLATE: Record<LinkKind, keyof Config["Links"]> = {
  "password-reset": "PasswordReset",
  "email-verification": "EmailVerification",
  "magic-link": "MagicLink",
  invitation: "Invitation",
};

/**
 * The link a recipient opens: the `Links:*` template with every `{token}` replaced by the
 * URL-encoded token. Built from configuration only, because the password-reset hook runs after
 * the response with no request to take a host from (Account rule 6), and a Host header chosen by
 * an attacker must never end up in a reset mail (link poisoning).
 */
export function buildLink(config: Config, kind: LinkKind, token: string): string {
  return config.Links[TEMPLATE[kind]].replaceAll("{token}", encodeURIComponent(token));
}

export function hasLink(kind: HookKind): kind is LinkKind {
  return kind !== "admin-password-issued";
}
