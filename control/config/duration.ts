/**
 * .NET-style durations, as the spec writes them: `[d.]hh:mm:ss[.fffffff]` (`14.00:00:00`,
 * `00:15:00`, `00:00:01.5`). A plain integer is a number of seconds (decisions.md).
 * Returns milliseconds, or null when the text is not a duration.
 */
const TIMESPAN = /^(-)?(?:(\d+)\.)?(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,7}))?$/;

export function parseDuration(text: string): number | null {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const m = TIMESPAN.exec(trimmed);
  if (!m) return null;
  const [, neg, days, hh, mm, ss, frac] = m;
  const hours = Number(hh);
  const minutes = Number(mm);
  const seconds = Number(ss);
  if (hours > 23 || minutes > 59 || seconds > 59) return null;
  const fraction = frac ? Number(`0.${frac}`) : 0;
  const ms = ((Number(days ?? 0) * 24 + hours) * 60 + minutes) * 60_000 + (seconds + fraction) * 1000;
  if (neg) return null; // no setting of this service takes a negative duration
  return Math.round(ms);
}

/** Formats milliseconds back to the spec's notation, for docs and error messages. */
export function formatDuration(ms: number): string {
  const total = Math.floor(ms / 1000);
  const days = Math.floor(total / 86_400);
  const pad = (n: number): string => String(n).padStart(2, "0");
  const hms = `${pad(Math.floor((total % 86_400) / 3600))}:${pad(Math.floor((total % 3600) / 60))}:${pad(total % 60)}`;
  return days > 0 ? `${days}.${hms}` : hms;
}
