/**
 * Field types of the configuration schema. Values arrive as strings from the environment or as
 * JSON values from CONFIG_FILE; each type accepts both and says in plain words what it wants.
 */
import { z } from "zod";
import { parseDuration } from "./duration.ts";

const TRUE = new Set(["true", "1", "yes", "on"]);
const FALSE = new Set(["false", "0", "no", "off"]);

export const bool = (fallback: boolean) =>
  z
    .union([z.boolean(), z.string()])
    .default(fallback)
    .transform((v, ctx) => {
      if (typeof v === "boolean") return v;
      const s = v.trim().toLowerCase();
      if (TRUE.has(s)) return true;
      if (FALSE.has(s)) return false;
      ctx.addIssue({ code: "custom", message: `expected true or false, got "${v}"` });
      return z.NEVER;
    });

export const int = (fallback: number | undefined, min: number, max = Number.MAX_SAFE_INTEGER) => {
  const base = z.union([z.number(), z.string()]);
  return (fallback === undefined ? base.optional() : base.default(fallback)).transform((v, ctx) => {
    if (v === undefined) return undefined as unknown as number;
    const n = typeof v === "number" ? v : /^\s*-?\d+\s*$/.test(v) ? Number(v) : Number.NaN;
    if (!Number.isInteger(n)) {
      ctx.addIssue({ code: "custom", message: `expected a whole number, got "${v}"` });
      return z.NEVER;
    }
    if (n < min || n > max) {
      ctx.addIssue({ code: "custom", message: `must be between ${min} and ${max}, got ${n}` });
      return z.NEVER;
    }
    return n;
  });
};

/** A decimal number (e.g. minutes, which accept `0.25` so tests need not wait whole minutes). */
export const decimal = (fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .union([z.number(), z.string()])
    .default(fallback)
    .transform((v, ctx) => {
      // `0.25`, `.5` and `2.` alike: however a person writes a decimal, never an exponent or a sign.
      const n = typeof v === "number" ? v : /^\s*(\d+(\.\d*)?|\.\d+)\s*$/.test(v) ? Number(v) : Number.NaN;
      if (!Number.isFinite(n) || n < min || n > max) {
        ctx.addIssue({ code: "custom", message: `expected a number between ${min} and ${max}, got "${v}"` });
        return z.NEVER;
      }
      return n;
    });

/** A duration in milliseconds, written `[d.]hh:mm:ss[.fffffff]` or as whole seconds. */
export const duration = (fallback: string, minMs = 0) =>
  z
    .union([z.string(), z.number()])
    .default(fallback)
    .transform((v, ctx) => {
      const ms = typeof v === "number" && Number.isInteger(v) && v >= 0 ? v * 1000 : parseDuration(String(v));
      if (ms === null) {
        ctx.addIssue({ code: "custom", message: `expected a duration such as 00:15:00 ([d.]hh:mm:ss) or whole seconds, got "${v}"` });
        return z.NEVER;
      }
      if (ms < minMs) {
        ctx.addIssue({ code: "custom", message: `must be at least ${minMs / 1000} seconds` });
        return z.NEVER;
      }
      return ms;
    });

export const text = () =>
  z
    .string()
    .optional()
    .transform((v) => (v === undefined || v.trim() === "" ? undefined : v));

export const textDefault = (fallback: string) => z.string().default(fallback);

export const oneOf = <const T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) =>
  z
    .string()
    .default(fallback)
    .transform((v, ctx) => {
      const hit = values.find((x) => x.toLowerCase() === v.trim().toLowerCase());
      if (hit === undefined) {
        ctx.addIssue({ code: "custom", message: `expected one of ${values.join(", ")}, got "${v}"` });
        return z.NEVER;
      }
      return hit as T[number];
    });

/** A list given as a JSON array, indexed keys (`Key:0`, `Key:1`) or a comma-separated string. */
export const list = (fallback: string[] = []) =>
  z
    .union([z.array(z.string()), z.string()])
    .default(fallback)
    .transform((v) => (Array.isArray(v) ? v : v.split(",")).map((s) => s.trim()).filter((s) => s !== ""));
