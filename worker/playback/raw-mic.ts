/**
 * Asks every getUserMedia of the meeting page for a raw microphone: echo cancellation, noise
 * suppression and automatic gain control off. With them on, Chromium turns a steady tone (music,
 * test tones) into silence (media-pipeline.md); switching Teams' own suppression off is not enough,
 * the browser's processing sits below it. Installed before navigation (an init script), so Teams
 * sees only the wrapped function.
 */
import type { BrowserContext } from "playwright-core";

/** Runs in the page; must be self-contained (serialised by Playwright). */
function wrapGetUserMedia(): void {
  const devices = navigator.mediaDevices as MediaDevices | undefined;
  if (!devices?.getUserMedia) return;
  const original = devices.getUserMedia.bind(devices);
  const raw = { echoCancellation: false, noiseSuppression: false, autoGainControl: false };
  devices.getUserMedia = (constraints?: MediaStreamConstraints) => {
    if (!constraints?.audio) return original(constraints);
    const audio = typeof constraints.audio === "object" ? { ...constraints.audio, ...raw } : raw;
    return original({ ...constraints, audio });
  };
}

export async function installRawMicConstraints(context: BrowserContext): Promise<void> {
  await context.addInitScript(wrapGetUserMedia);
}
