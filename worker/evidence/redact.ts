/**
 * Redaction for everything written as evidence (#16): no passcode, token or typed value may reach
 * a file an operator downloads (GUIDE: secrets never reach an evidence file).
 */
import { SECRET_PARAMS, scrubUrlSecrets } from "../../shared/log/url-secrets.ts";

const MASK = "[redacted]";

const JSON_FIELD = /("(?:passcode|password|pwd|token|accessToken|access_token|refresh_token|refreshToken|id_token|skypetoken|skypeToken|authorization|secret|coords|meetingCode)"\s*:\s*")[^"]*"/gi;
const BEARER = /\b(Bearer|Basic|skypetoken=)\s*[A-Za-z0-9._~+/=-]{8,}/gi;
const JWT = /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;

export type Redactor = (text: string) => string;

/** Literal secrets the worker knows (the link's passcode and coords), in their plain and URL-encoded forms. */
export function secretsOfLink(link: string): string[] {
  const found = new Set<string>();
  const add = (v: string | null) => {
    if (v && v.length >= 3) found.add(v);
  };
  try {
    const url = new URL(link);
    const fromParams = (params: URLSearchParams) => {
      for (const name of SECRET_PARAMS) for (const v of params.getAll(name)) add(v);
    };
    fromParams(url.searchParams);
    const q = url.hash.indexOf("?");
    if (q >= 0) fromParams(new URLSearchParams(url.hash.slice(q + 1)));
  } catch {
    // Not a URL: nothing to add.
  }
  return [...found];
}

export function createRedactor(secrets: readonly string[] = []): Redactor {
  const literals = new Set<string>();
  for (const s of secrets) {
    if (s.length < 3) continue;
    literals.add(s);
    literals.add(encodeURIComponent(s));
    literals.add(Buffer.from(s).toString("base64").replace(/=+$/, ""));
  }
  const ordered = [...literals].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = scrubUrlSecrets(text).replace(JSON_FIELD, `$1${MASK}"`).replace(BEARER, `$1 ${MASK}`).replace(JWT, MASK);
    for (const s of ordered) out = out.split(s).join(MASK);
    return out;
  };
}
