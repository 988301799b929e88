/** Request fields shared by the account routes, with messages written for the person typing. */
import { z } from "zod";

/** Room for any real name; a bound on an anonymous endpoint. */
const USER_NAME_MAX = 64;
/** RFC 5321 4.5.3.1: a forward path is at most 256 octets including angle brackets. */
export const EMAIL_MAX = 254;

export const userNameField = z
  .string({ error: "Choose a user name." })
  .trim()
  .min(1, "Choose a user name.")
  .max(USER_NAME_MAX, `The user name must be at most ${USER_NAME_MAX} characters long.`)
  // Account rule 1: `@` would make a user name indistinguishable from an email identifier.
  .refine((v) => !v.includes("@"), "The user name cannot contain @.")
  .refine((v) => !/[\s\p{Cc}]/u.test(v), "The user name cannot contain spaces or control characters.");

/**
 * One `@` between a non-empty local part and domain, nothing invisible. The spec lists no address
 * rule among its 400 causes, and the address is proven by mail, not by its shape: a stricter
 * pattern would refuse deliverable addresses (`ops@localhost`, `名前@example.jp`, `a@b.c`).
 */
const EMAIL_SHAPE = /^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+$/u;

export const emailField = z
  .string({ error: "Enter an email address." })
  .trim()
  .max(EMAIL_MAX, `The email address must be at most ${EMAIL_MAX} characters long.`)
  .regex(EMAIL_SHAPE, "Enter a valid email address, such as name@example.com.");
