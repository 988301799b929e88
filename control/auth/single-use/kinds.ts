/**
 * The four kinds of single-use token (login-service.md "Single-use tokens") and the lifetime key of
 * each. The kind is stored with the row and checked on redemption, so a token mailed for one
 * purpose (say a magic link) can never be redeemed at another endpoint (say invitation completion).
 */
import type { Config } from "../../config/index.ts";

export type SingleUseKind = "password-reset" | "invitation" | "email-verification" | "magic-link";

export function lifetimeOf(config: Config, kind: SingleUseKind): number {
  const ll = config.LocalLogin;
  switch (kind) {
    case "password-reset":
      return ll.PasswordResetTokenLifetime;
    case "invitation":
      return ll.InvitationTokenLifetime;
    case "email-verification":
      return ll.EmailVerificationTokenLifetime;
    case "magic-link":
      return ll.MagicLinkTokenLifetime;
  }
}
