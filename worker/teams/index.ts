// The Teams adapter: drives a Playwright page through the anonymous web join (teams-dom.md).
export { normalizeMeetingUrl } from "./url.ts";
export { joinMeeting, type JoinOptions, type JoinOutcome } from "./join.ts";
export { waitForAdmission, type AdmissionOptions, type AdmissionResult } from "./admission.ts";
export { watchCall, type WatchOptions, type WatchResult } from "./watch.ts";
export { leaveMeeting, setMicMuted, type ControlResult } from "./controls.ts";
export { disableNoiseSuppression } from "./noise-suppression.ts";
export { turnOffIncomingVideo } from "./incoming-video.ts";
export { wrapUiTurns } from "./ui-turn.ts";
export { classify, probePage, type Probe, type Screen } from "./probe.ts";
export type { ScreenName } from "./signals.ts";
