import { Webhook } from "standardwebhooks";
import type { StoredEvent } from "./store.ts";

export type AttemptOutcome = { ok: true; status: number } | { ok: false; status?: number; error?: string };

/** Secrets in the Standard Webhooks form start with this and hold base64 key bytes. */
const STANDARD_SECRET_PREFIX = "whsec_";

/**
 * Why a WEBHOOK_SECRET cannot sign, or null. A `whsec_` secret promises a base64 key: when the
 * reference library cannot read it, no receiver verifying with `new Webhook(secret)` could either
 * (it throws), so the start refuses it instead of signing with a key nobody shares.
 */
export function webhookSecretProblem(secret: string): string | null {
  const trimmed = secret.trim();
  if (!trimmed.startsWith(STANDARD_SECRET_PREFIX)) return null;
  try {
    new Webhook(trimmed);
    return null;
  } catch {
    return `a secret starting with ${STANDARD_SECRET_PREFIX} must be followed by the base64 of the key (e.g. ${STANDARD_SECRET_PREFIX}$(openssl rand -base64 32))`;
  }
}

/**
 * Builds a signer the way the Standard Webhooks reference library reads a secret: the part after
 * an optional `whsec_` prefix is the base64 of the key, so a receiver verifying with
 * `new Webhook(WEBHOOK_SECRET)` agrees with us for every secret that library accepts. Only a secret
 * it cannot read (not base64, e.g. `my-shared-secret`) is used as its raw UTF-8 bytes. Whitespace
 * around a pasted secret is dropped: the library ignores a trailing newline but a leading space
 * would otherwise turn a valid `whsec_` secret into raw bytes no receiver expects.
 */
export function createSigner(secret: string): Webhook {
  const trimmed = secret.trim();
  if (trimmed.startsWith(STANDARD_SECRET_PREFIX)) return new Webhook(trimmed);
  try {
    return new Webhook(trimmed);
  } catch {
    return new Webhook(new Uint8Array(Buffer.from(trimmed, "utf8")), { format: "raw" });
  }
}

export interface AttemptOptions {
  url: string;
  signer: Webhook | null;
  timeoutMs: number;
  signal: AbortSignal;
}

/** One POST; never throws. Only a 2xx counts as accepted (redirects are not followed). */
export async function attemptDelivery(event: StoredEvent, options: AttemptOptions): Promise<AttemptOutcome> {
  const body = JSON.stringify(event.payload);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "webhook-id": event.webhook_id,
  };
  if (options.signer) {
    // The timestamp is the attempt's, not the event's: receivers reject signatures older than
    // their tolerance (5 minutes in the reference library), and retries run for a day.
    const sentAt = new Date();
    headers["webhook-timestamp"] = String(Math.floor(sentAt.getTime() / 1000));
    headers["webhook-signature"] = options.signer.sign(event.webhook_id, sentAt, body);
  }
  try {
    const response = await fetch(options.url, {
      method: "POST",
      body,
      headers,
      redirect: "manual",
      signal: AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)]),
    });
    // Only the status counts: the body is dropped so the connection is free again.
    await response.body?.cancel().catch(() => undefined);
    const status = response.status;
    return status >= 200 && status < 300 ? { ok: true, status } : { ok: false, status };
  } catch (error) {
    return { ok: false, error: failureCode(error) };
  }
}

/** What failed, as a short code for the log: ECONNREFUSED and the like, ETIMEDOUT, AbortError. */
function failureCode(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  if (typeof cause?.code === "string") return cause.code;
  const name = (error as { name?: unknown }).name;
  if (name === "TimeoutError") return "ETIMEDOUT";
  return typeof name === "string" && name !== "TypeError" ? name : String(error);
}
