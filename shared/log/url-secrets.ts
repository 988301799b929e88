/**
 * Query and fragment parameters that carry secrets in Teams and sign-in URLs (`p` and `coords`
 * hold a meeting's passcode), and the scrub that blanks their values wherever a URL is quoted: in
 * evidence files (worker/evidence/redact.ts), in every log line (logger.ts), and in a message
 * that quotes a library's error (Playwright's `page.goto` names the URL it failed on).
 */
const MASK = "[redacted]";

export const SECRET_PARAMS = [
  "p", "pwd", "passcode", "password", "coords", "context", "token", "access_token", "id_token", "refresh_token",
  "code", "sig", "signature", "key", "skypetoken", "auth", "authorization", "client_secret", "secret", "ticket",
];
const PARAM = new RegExp(`([?&#;](?:${SECRET_PARAMS.join("|")})=)[^&#\\s"'<>\\\\]*`, "gi");
const ENCODED_PARAM = new RegExp(`((?:%3F|%26|%23)(?:${SECRET_PARAMS.join("|")})%3D)(?:(?!%26|%23)[^&#\\s"'<>\\\\])*`, "gi");

/** `text` with the value of every secret URL parameter (plain or percent-encoded) replaced. */
export function scrubUrlSecrets(text: string): string {
  return text.replace(PARAM, `$1${MASK}`).replace(ENCODED_PARAM, `$1${MASK}`);
}
