/**
 * Request validation: the route's zod schema decides, and a refusal is written in the family's
 * shape: bot API 422 `{detail: [{loc, msg, type}]}`, auth API 400 `{errors: [...]}` with sentences
 * a person can act on.
 */
import type { z } from "zod";
import { AppError, type ErrorFamily, type ValidationItem } from "./errors.ts";

export type InputPart = "body" | "query" | "path";

export function parseInput<S extends z.ZodType>(schema: S, value: unknown, part: InputPart, family: ErrorFamily): z.output<S> {
  const result = schema.safeParse(value ?? (part === "body" ? undefined : {}));
  if (result.success) return result.data;
  if (family === "bot") throw new AppError("validation_failed", { items: result.error.issues.flatMap((issue) => botItems(issue, value, part)) });
  throw new AppError("bad_request", { errors: result.error.issues.map((issue) => authMessage(issue, valueAt(value, issue.path))) });
}

/** A bot route's body that is there but not an object (a JSON string or number, text, a form), as pydantic words it. */
export function notAnObject(): AppError {
  return new AppError("validation_failed", {
    items: [{ loc: ["body"], msg: "Input should be a valid dictionary or object to extract fields from", type: "model_attributes_type" }],
  });
}

/**
 * One issue as pydantic would list it: an object with unknown keys is one item per key, each
 * naming the key in its `loc` (`["body", "automatic_leave", "foo"]`), as pydantic's
 * `extra_forbidden` does.
 */
function botItems(issue: z.core.$ZodIssue, root: unknown, part: InputPart): ValidationItem[] {
  const loc = [part, ...issue.path.map((p) => (typeof p === "number" ? p : String(p)))];
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => ({ loc: [...loc, key], msg: "Extra inputs are not permitted", type: "extra_forbidden" }));
  }
  const type = botIssueType(issue, valueAt(root, issue.path));
  return [{ loc, msg: botMessage(issue, type), type }];
}

/** pydantic's wording where zod's says less ("Invalid input"), which clients of such APIs look for. */
function botMessage(issue: z.core.$ZodIssue, type: string): string {
  if (type === "missing") return "Field required";
  if (type === "bool_parsing") return "Input should be a valid boolean, unable to interpret input";
  if (type === "literal_error" && issue.code === "invalid_union") {
    const values = issue.errors.flatMap((b) => (b[0]?.code === "invalid_value" ? b[0].values : [])).map((v) => JSON.stringify(v));
    return `Input should be ${values.length > 1 ? `${values.slice(0, -1).join(", ")} or ${values.at(-1)}` : values.join("")}`;
  }
  return issue.message;
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
      return boundType(issue.origin, "long", issue.inclusive === false ? "less_than" : "less_than_equal");
    case "too_small":
      return boundType(issue.origin, "short", issue.inclusive === false ? "greater_than" : "greater_than_equal");
    case "invalid_value":
      return "enum";
    case "invalid_union":
      return unionType(issue.errors, input);
    case "unrecognized_keys":
      return "extra_forbidden";
    case "custom":
      return "value_error";
    default:
      return issue.code;
  }
}

/**
 * A bound's name follows what was bounded (zod's `origin`), not the input's JSON type: a query's
 * `limit=0` is a number too small (`greater_than_equal`), though it arrived as text.
 */
function boundType(origin: string, length: "long" | "short", numeric: string): string {
  if (origin === "string") return `string_too_${length}`;
  if (origin === "array" || origin === "set" || origin === "file") return `too_${length}`;
  return numeric;
}

/**
 * A union refused: a choice among literals (`sample_rate` 44100) is pydantic's `literal_error`;
 * a boolean written as text that is neither (`mute_after=maybe`) is `bool_parsing`.
 */
function unionType(branches: z.core.$ZodIssue[][], input: unknown): string {
  const firsts = branches.flatMap((b) => (b[0] ? [b[0]] : []));
  if (firsts.some((i) => i.code === "invalid_type" && i.expected === "boolean")) return "bool_parsing";
  if (firsts.length > 0 && firsts.every((i) => i.code === "invalid_value")) return "literal_error";
  return firsts[0] ? botIssueType(firsts[0], input) : "union_tag_invalid";
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
