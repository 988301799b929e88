/**
 * Display names as Teams shows them (teams-dom.md "Speakers and participants"): decorations such
 * as "(Guest)", "External", "(Unverified)" or "Unfamiliar" follow the name in tiles and People
 * rows; they go to `label`, the name stays exactly as typed (quotes, emoji, any length). A tile's
 * `data-tid` is an email on some builds: that is an address, never a name.
 */
const DECORATIONS = ["Guest", "External", "Unverified", "Unfamiliar"] as const;
const DECORATION = new RegExp(`^\\(?(${DECORATIONS.join("|")})\\)?$`, "i");
/** A trailing decoration: "Ada (Guest)", "Ada, External", "Ada External" (a tile's aria-label). */
const TRAILING = new RegExp(`(?:\\s*,\\s*|\\s+)\\(?(${DECORATIONS.join("|")})\\)?$`, "i");
/** People-pane row states that are not part of the name (aria-label "<name>, <tags…>"). */
const ROW_STATES = /^(muted|unmuted|organi[sz]er|presenter|attendee|in the lobby|hand raised|speaking|you|me|camera (on|off)|mic (on|off))$/i;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function isEmailShaped(text: string): boolean {
  return EMAIL.test(text.trim());
}

export interface SplitName {
  name: string;
  decorations: string[];
}

const canonical = (tag: string): string => DECORATIONS.find((d) => d.toLowerCase() === tag.toLowerCase()) ?? tag;

/** "Ada Lovelace (Guest)" → {name: "Ada Lovelace", decorations: ["Guest"]}; a name is never emptied. */
export function splitDecorations(shown: string): SplitName {
  let name = shown.trim();
  const decorations: string[] = [];
  for (let m = TRAILING.exec(name); m; m = TRAILING.exec(name)) {
    const rest = name.slice(0, m.index).trimEnd();
    if (rest.length === 0) break;
    decorations.unshift(canonical(m[1] ?? ""));
    name = rest;
  }
  return { name, decorations };
}

/**
 * A People-pane row's aria-label, "<name>, <tags…>". When the name is already known from the
 * roster or the call object it is matched as a prefix (a name may hold commas itself); otherwise
 * trailing parts that are decorations or row states are dropped.
 */
export function parseRowLabel(label: string, known: readonly string[]): SplitName {
  const text = label.trim();
  const decorationsOf = (tail: string): string[] =>
    tail
      .split(",")
      .map((s) => s.trim())
      .filter((s) => DECORATION.test(s))
      .map((s) => canonical(s.replace(/[()]/g, "")));
  let best: string | null = null;
  for (const name of known) {
    if (name && (text === name || text.startsWith(`${name},`) || text.startsWith(`${name} (`)) && (best === null || name.length > best.length)) best = name;
  }
  if (best !== null) {
    const tail = text.slice(best.length);
    const inParens = [...tail.matchAll(/\(([^)]*)\)/g)].map((m) => m[1] ?? "").filter((s) => DECORATION.test(s));
    return { name: best, decorations: [...new Set([...inParens.map(canonical), ...decorationsOf(tail)])] };
  }
  const parts = text.split(",");
  const decorations: string[] = [];
  while (parts.length > 1) {
    const last = (parts[parts.length - 1] ?? "").trim();
    if (DECORATION.test(last)) decorations.unshift(canonical(last.replace(/[()]/g, "")));
    else if (!ROW_STATES.test(last)) break;
    parts.pop();
  }
  const split = splitDecorations(parts.join(","));
  return { name: split.name, decorations: [...split.decorations, ...decorations] };
}
