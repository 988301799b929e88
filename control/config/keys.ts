/**
 * Folds configuration keys to the schema's spelling (keys are case-insensitive, as in .NET) and
 * finds the nearest known key for an unknown one, so a typo is named with its correction.
 */
import type { z } from "zod";
import { isTree, type RawTree, type RawValue } from "./sources.ts";

type Def = { type: string; shape?: Record<string, z.ZodType>; innerType?: z.ZodType; in?: z.ZodType };
const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** The object shape behind defaults, pipes and refinements, or undefined for a leaf. */
export function shapeOf(schema: z.ZodType): Record<string, z.ZodType> | undefined {
  let s: z.ZodType | undefined = schema;
  for (let i = 0; s && i < 10; i++) {
    const def = defOf(s);
    if (def.type === "object") return def.shape;
    s = def.innerType ?? def.in;
  }
  return undefined;
}

export function foldKeys(value: RawValue, schema: z.ZodType): RawValue {
  const shape = shapeOf(schema);
  if (!shape || !isTree(value)) return value;
  const names = Object.keys(shape);
  const out: RawTree = {};
  for (const [key, child] of Object.entries(value)) {
    const canonical = names.find((n) => n.toLowerCase() === key.toLowerCase()) ?? key;
    const childSchema = shape[canonical];
    out[canonical] = childSchema ? foldKeys(child, childSchema) : child;
  }
  return out;
}

export function nearest(key: string, candidates: string[]): string | undefined {
  let best: string | undefined;
  let bestScore = Infinity;
  for (const c of candidates) {
    const d = distance(key.toLowerCase(), c.toLowerCase());
    if (d < bestScore) {
      bestScore = d;
      best = c;
    }
  }
  return bestScore <= Math.max(2, Math.floor(key.length / 3)) ? best : undefined;
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}
