/**
 * The one closed catalogue of errors. Each code has an HTTP status and a public message; the
 * wire shape comes from the API family the request belongs to (login-service.md's auth bodies,
 * or the bot API's `{detail}` of decisions.md). Internal detail goes to `cause` and the log only.
 */
export type ErrorFamily = "auth" | "bot";

interface CatalogueEntry {
  status: number;
  /** Default public text; auth `errors` arrays and bot `detail` strings both start from it. */
  message: string;
  /** Auth wire shape: OAuth-style `{error, error_description}` or correctable `{errors: []}`. */
  auth: { kind: "oauth"; error: string } | { kind: "errors" } | { kind: "empty" };
}

export const ERRORS = {
  invalid_grant: { status: 401, message: "The credentials were not accepted.", auth: { kind: "oauth", error: "invalid_grant" } },
  invalid_token: { status: 401, message: "A valid bearer token is required.", auth: { kind: "oauth", error: "invalid_token" } },
  bad_request: { status: 400, message: "The request is not valid.", auth: { kind: "errors" } },
  validation_failed: { status: 422, message: "The request body is not valid.", auth: { kind: "errors" } },
  forbidden: { status: 403, message: "You are not allowed to do this.", auth: { kind: "oauth", error: "forbidden" } },
  not_found: { status: 404, message: "Not found.", auth: { kind: "oauth", error: "not_found" } },
  method_not_allowed: { status: 405, message: "Method Not Allowed", auth: { kind: "errors" } },
  conflict: { status: 409, message: "This conflicts with the current state.", auth: { kind: "errors" } },
  upgrade_required: { status: 426, message: "Connect with a WebSocket client (Upgrade: websocket).", auth: { kind: "errors" } },
  payload_too_large: { status: 413, message: "The request body is too large.", auth: { kind: "errors" } },
  unsupported_media_type: { status: 415, message: "Send the body as application/json.", auth: { kind: "errors" } },
  too_many_requests: { status: 429, message: "Too many requests. Try again later.", auth: { kind: "errors" } },
  notification_failed: { status: 502, message: "The change was made but the notification could not be delivered.", auth: { kind: "oauth", error: "notification_failed" } },
  insufficient_storage: { status: 507, message: "There is not enough disk space for this request.", auth: { kind: "errors" } },
  service_unavailable: { status: 503, message: "The service cannot take this request now.", auth: { kind: "oauth", error: "temporarily_unavailable" } },
  internal: { status: 500, message: "Internal server error.", auth: { kind: "oauth", error: "server_error" } },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof ERRORS;

/** One item of a bot-API validation error (`422 {detail: [{loc, msg, type}]}`). */
export interface ValidationItem {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export interface AppErrorOptions {
  /** Public text replacing the catalogue's default (auth: the single `errors` entry / description). */
  message?: string;
  /** Auth correctable input: several messages for a person. */
  errors?: string[];
  /** Bot validation items. */
  items?: ValidationItem[];
  headers?: Record<string, string>;
  cause?: unknown;
}

export class AppError extends Error {
  override readonly name = "AppError";
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly options: AppErrorOptions = {},
  ) {
    super(options.message ?? ERRORS[code].message, { cause: options.cause });
    this.status = ERRORS[code].status;
  }

  /** The response body for the given API family. */
  body(family: ErrorFamily): unknown {
    const entry: CatalogueEntry = ERRORS[this.code];
    if (family === "bot") {
      if (this.options.items) return { detail: this.options.items };
      return { detail: this.options.errors?.join(" ") ?? this.message };
    }
    if (entry.auth.kind === "errors") return { errors: this.options.errors ?? [this.message] };
    if (entry.auth.kind === "empty") return undefined;
    return { error: entry.auth.error, error_description: this.message };
  }
}

/** Shorthands keep handlers short and the codes greppable. */
export const fail = {
  invalidGrant: (cause?: unknown) => new AppError("invalid_grant", { cause }),
  badRequest: (...errors: string[]) => new AppError("bad_request", { errors, message: errors.join(" ") }),
  conflict: (...errors: string[]) => new AppError("conflict", { errors, message: errors.join(" ") }),
  notFound: (message?: string) => new AppError("not_found", { message }),
  forbidden: (message?: string) => new AppError("forbidden", { message }),
  tooManyRequests: (retryAfterSeconds: number, ...errors: string[]) =>
    new AppError("too_many_requests", {
      errors: errors.length > 0 ? errors : undefined,
      message: errors[0],
      headers: { "Retry-After": String(Math.max(1, Math.ceil(retryAfterSeconds))) },
    }),
};
