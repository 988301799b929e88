/**
 * An admin creates an account on someone's behalf (Account rules 1, 10, 12). The password is the
 * admin's or generated; it is never in the response, and the caller is not signed in as the new
 * account. The address is stored unproven, as at registration: the admin's typing proves nothing
 * about who reads that mailbox.
 *
 * Hook (Events: "after an admin creates an account or sets a password; never for a password a
 * person chose for themselves"): called whenever the account has an address, for a generated
 * password and for one the admin typed alike, because in both cases the account's owner did not
 * choose it and has to learn it. Without an address there is nobody to mail and the admin, who
 * typed the password, passes it on. A hook failure answers 502 with the account kept; a generated
 * password is then lost for good (set a new one).
 */
import { AppError, fail } from "../../http/errors.ts";
import type { AuthContext } from "../context.ts";
import { assertAcceptablePassword } from "../passwords/policy.ts";
import { createPasswordAccount } from "../passwords/create-account.ts";
import { deliver, DeliveryFailed, requireHook } from "../single-use/index.ts";
import { generatePassword } from "./generated-password.ts";

export interface AdminCreateUser {
  userName: string;
  email: string | null;
  password: string | null;
}

export interface CreatedUser {
  userId: string;
  userName: string;
  email: string | null;
}

export async function adminCreateUser(ctx: AuthContext, input: AdminCreateUser): Promise<CreatedUser> {
  requireHook(ctx, "adminPasswordIssued");
  if (input.email === null && input.password === null) {
    throw fail.badRequest("Give an email address (the generated password is mailed there) or a password.");
  }
  if (input.password !== null) assertAcceptablePassword(ctx.config, input.password);
  const password = input.password ?? generatePassword(ctx.config);
  const userId = await createPasswordAccount(ctx, { userName: input.userName, email: input.email, password });
  ctx.logger.info({ userId, generatedPassword: input.password === null }, "account created by an administrator");
  if (input.email !== null) {
    try {
      await deliver(ctx, "adminPasswordIssued", { to: input.email, userId, userName: input.userName, password });
    } catch (error) {
      if (!(error instanceof DeliveryFailed)) throw error;
      throw new AppError("notification_failed", {
        message: "The account was created but its password could not be delivered. Set a new password for it.",
        cause: error,
      });
    }
  }
  return { userId, userName: input.userName, email: input.email };
}
