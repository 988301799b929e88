/**
 * The timeline's stored name: the recording's base name with `.timeline.json`
 * (`<session_id>_<YYYYMMDD>_<HHMMSS>.timeline.json`, UTC), so the two sort and travel together.
 */
export const TIMELINE_SUFFIX = ".timeline.json";

export function timelineFileNameFor(recordingFileName: string): string {
  const dot = recordingFileName.lastIndexOf(".");
  return `${dot > 0 ? recordingFileName.slice(0, dot) : recordingFileName}${TIMELINE_SUFFIX}`;
}
