/**
 * Request validation: the route's zod schema decides, and a refusal is written in the family's
 * shape: bot API 422 `{detail: [{loc, msg, type}]}`, auth API 400 `{errors: [...]}` with sentences
 * a person can act on.
 */
import type { z } from "zod";
import { AppError, type ErrorFamily } from "./errors.ts";

export type InputPart = "body" | "query" | "path";

export function parseInput<S extends z.ZodType>(schema: S, value: unknown, part: InputPart, family: ErrorFamily): z.output<S> {
  const result = schema.safeParse(value ?? (part === "body" ? undefined : {}));
  if (result.success) return result.data;
  if (family === "bot") {
    throw new AppError("validation_failed", {
      items: result.error.issues.map((issue) => {
        const type = botIssueType(issue, valueAt(value, issue.path));
        return {
          loc: [part, ...issue.path.map((p) => (typeof p === "number" ? p : String(p)))],
          // pydantic's wording for an absent field, which clients of such APIs look for.
          msg: type === "missing" ? "Field required" : issue.message,
          type,
        };
      }),
    });
  }
  throw new AppError("bad_request", { errors: result.error.issues.map((issue) => authMessage(issue, valueAt(value, issue.path))) });
}

/** The value an issue is about (zod does not report inputs by default). */
function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const key of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

const TYPE_NAMES: Record<string, string> = { boolean: "bool", string: "string", number: "float", int: "int", object: "dict", array: "list" };

/** Error types as the service this API comes from names them (pydantic: `missing`, `bool_type`…). */
function botIssueType(issue: z.core.$ZodIssue, input: unknown): string {
  if (input === undefined && (issue.code === "invalid_type" || issue.code === "invalid_union")) return "missing";
  switch (issue.code) {
    case "invalid_type":
      return `${TYPE_NAMES[issue.expected] ?? issue.expected}_type`;
    case "too_big":
      return typeof input === "string" ? "string_too_long" : issue.origin === "array" ? "too_long" : "less_than_equal";
    case "too_small":
      return typeof input === "string" ? "string_too_short" : issue.origin === "array" ? "too_short" : "greater_than_equal";
    case "invalid_value":
      return "enum";
    case "unrecognized_keys":
      return "extra_forbidden";
    case "custom":
      return "value_error";
    default:
      return issue.code;
  }
}

function authMessage(issue: z.core.$ZodIssue, input: unknown): string {
  const field = issue.path.map(String).join(".");
  // zod does not report inputs by default: read the value so `{password: 123}` is "must be a
  // string", not "is required".
  if (issue.code === "invalid_type" && input === undefined) return field ? `${field} is required.` : "A JSON body is required.";
  if (issue.code === "invalid_type") return field ? `${field} must be a ${issue.expected}.` : "The request body must be a JSON object.";
  // Messages written in the schemas (e.g. password rules) are already sentences.
  return /[.!?]$/.test(issue.message) ? issue.message : `${field}: ${issue.message}.`;
}
