/**
 * ISO 8601 with an explicit numeric offset (`2026-11-22T04:10:00.123+00:00`), as login-service.md
 * asks for timestamps "with offset" and as .NET's DateTimeOffset writes them; `Z` would also be an
 * offset designator, but the numeric form is what clients of the original service parse.
 */
export function isoWithOffset(date: Date): string {
  return date.toISOString().replace(/Z$/, "+00:00");
}
