/**
 * A strict reader of the Prometheus text exposition format (0.0.4): every line must be a
 * `# HELP`, a `# TYPE` or a sample of a family whose TYPE came first; names, label sets, escapes
 * and values are checked; histograms must have ordered cumulative buckets ending in +Inf equal to
 * `_count`. Anything else throws, naming the line.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  types: Map<string, string>;
  samples: Sample[];
  /** The value of one series (0 when absent: a counter not yet incremented is not exported). */
  value(name: string, labels?: Record<string, string>): number;
  /** Sum over every series of a name whose labels include `labels`. */
  sum(name: string, labels?: Record<string, string>): number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);
const SUFFIXES: Record<string, string[]> = { histogram: ["_bucket", "_sum", "_count"], summary: ["", "_sum", "_count"], counter: ["", "_total"], gauge: [""], untyped: [""] };

export function parsePrometheus(text: string): Exposition {
  const types = new Map<string, string>();
  const helps = new Set<string>();
  const samples: Sample[] = [];
  if (!text.endsWith("\n")) throw new Error("exposition must end with a newline");
  const lines = text.slice(0, -1).split("\n");
  lines.forEach((line, i) => {
    const where = `line ${i + 1}: ${JSON.stringify(line)}`;
    if (line === "") return;
    if (line.startsWith("#")) {
      const m = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
      if (!m) throw new Error(`bad comment, ${where}`);
      const [, kind, name, rest] = m;
      if (!NAME.test(name!)) throw new Error(`bad metric name, ${where}`);
      if (kind === "TYPE") {
        if (!TYPES.has(rest!)) throw new Error(`bad type, ${where}`);
        if (types.has(name!)) throw new Error(`second TYPE, ${where}`);
        if (samples.some((s) => familyOf(s.name, types) === name)) throw new Error(`TYPE after samples, ${where}`);
        types.set(name!, rest!);
      } else {
        if (helps.has(name!)) throw new Error(`second HELP, ${where}`);
        if (/\\(?![\\n])/.test(rest!)) throw new Error(`bad escape in HELP, ${where}`);
        helps.add(name!);
      }
      return;
    }
    samples.push(parseSample(line, where, types));
  });
  checkHistograms(samples, types);
  const matches = (s: Sample, name: string, labels: Record<string, string>): boolean => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v);
  return {
    types,
    samples,
    value(name, labels = {}) {
      const found = samples.filter((s) => s.name === name && Object.keys(s.labels).length === Object.keys(labels).length && matches(s, name, labels));
      if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} names ${found.length} series`);
      return found[0]?.value ?? 0;
    },
    sum(name, labels = {}) {
      return samples.filter((s) => matches(s, name, labels)).reduce((n, s) => n + s.value, 0);
    },
  };
}

function familyOf(sample: string, types: Map<string, string>): string | undefined {
  for (const [family, type] of types) for (const suffix of SUFFIXES[type]!) if (sample === family + suffix) return family;
  return undefined;
}

function parseSample(line: string, where: string, types: Map<string, string>): Sample {
  const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( -?\d+)?$/.exec(line);
  if (!m) throw new Error(`bad sample, ${where}`);
  const [, name, , body, raw] = m;
  if (!familyOf(name!, types)) throw new Error(`sample without a TYPE before it, ${where}`);
  const labels: Record<string, string> = {};
  let rest = body ?? "";
  while (rest.length > 0) {
    const lm = /^([^=]+)="((?:[^"\\]|\\[\\"n])*)"(,|$)/.exec(rest);
    if (!lm || !LABEL.test(lm[1]!)) throw new Error(`bad label set, ${where}`);
    if (lm[1]! in labels) throw new Error(`repeated label, ${where}`);
    labels[lm[1]!] = lm[2]!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    rest = rest.slice(lm[0].length);
  }
  // Prometheus reads values with Go's strconv.ParseFloat, which takes NaN and Inf in any case
  // (prom-client writes an empty mean as `Nan`).
  if (!/^([-+]?inf|nan|[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?)$/i.test(raw!)) throw new Error(`bad value, ${where}`);
  const value = /^nan$/i.test(raw!) ? NaN : /^[+]?inf$/i.test(raw!) ? Infinity : /^-inf$/i.test(raw!) ? -Infinity : Number(raw);
  return { name: name!, labels, value };
}

function checkHistograms(samples: Sample[], types: Map<string, string>): void {
  for (const [family, type] of types) {
    if (type !== "histogram") continue;
    const series = new Map<string, Sample[]>();
    for (const s of samples.filter((x) => x.name === `${family}_bucket`)) {
      const { le, ...rest } = s.labels;
      if (le === undefined) throw new Error(`${family}_bucket without le`);
      const key = JSON.stringify(rest);
      series.set(key, [...(series.get(key) ?? []), s]);
    }
    for (const [key, buckets] of series) {
      const bounds = buckets.map((b) => (b.labels.le === "+Inf" ? Infinity : Number(b.labels.le)));
      for (let i = 1; i < buckets.length; i++) {
        if (!(bounds[i]! > bounds[i - 1]!)) throw new Error(`${family} ${key}: buckets out of order`);
        if (buckets[i]!.value < buckets[i - 1]!.value) throw new Error(`${family} ${key}: buckets not cumulative`);
      }
      if (bounds.at(-1) !== Infinity) throw new Error(`${family} ${key}: no +Inf bucket`);
      const count = samples.find((s) => s.name === `${family}_count` && JSON.stringify(s.labels) === key);
      if (count?.value !== buckets.at(-1)!.value) throw new Error(`${family} ${key}: _count differs from the +Inf bucket`);
    }
  }
}
