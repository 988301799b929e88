/**
 * The closed list of `error_code` values a session that ends in `error` carries (issue #16):
 * status, sessions list and the `finished` webhook show one of these, null for every other end.
 * `error_message` stays the human sentence; the code is what a program branches on.
 */
import { z } from "zod";

export const ERROR_CODES = [
  "login_required",
  "anonymous_join_disabled",
  "captcha",
  "meeting_not_found",
  "passcode_incorrect",
  "meeting_unreachable",
  "prejoin_stuck",
  "unexpected_page",
  "browser_crashed",
  "audio_failed",
  "storage_failed",
  "disk_full",
  "internal",
] as const;

export const errorCodeSchema = z.enum(ERROR_CODES);
export type ErrorCode = z.infer<typeof errorCodeSchema>;
