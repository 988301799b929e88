/**
 * Password policy (Account rule 5): a length range and, when `RejectCommonPasswords` is on, the
 * common-password list; nothing else.
 * No composition rules (NIST SP 800-63B 5.1.1.2: they push people to predictable patterns).
 * Length counts Unicode code points, what a person would count, not UTF-16 units or bytes.
 */
import type { Config } from "../../config/index.ts";
import { fail } from "../../http/errors.ts";
import { isCommonPassword } from "./common-passwords.ts";

export function passwordProblems(config: Config, password: string): string[] {
  const ll = config.LocalLogin;
  const length = [...password].length;
  if (length < ll.MinimumPasswordLength) return [`The password must be at least ${ll.MinimumPasswordLength} characters long.`];
  if (length > ll.MaximumPasswordLength) return [`The password must be at most ${ll.MaximumPasswordLength} characters long.`];
  if (ll.RejectCommonPasswords && isCommonPassword(password)) {
    return ["This password is one of the most commonly used passwords and is easy to guess. Choose another one."];
  }
  return [];
}

/** Throws the 400 `{errors}` body when the password breaks the policy. */
export function assertAcceptablePassword(config: Config, password: string): void {
  const problems = passwordProblems(config, password);
  if (problems.length > 0) throw fail.badRequest(...problems);
}
