/** The bot's part of /readyz: Chromium, PulseAudio and the recording store must be usable. */
import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { delimiter, join } from "node:path";
import type { RecordingStore } from "../storage/index.ts";

async function executable(path: string): Promise<boolean> {
  return access(path, constants.X_OK).then(
    () => true,
    () => false,
  );
}

async function onPath(name: string): Promise<boolean> {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir && (await executable(join(dir, name)))) return true;
  }
  return false;
}

export async function botProblems(chromiumPath: string, store: RecordingStore): Promise<Record<string, string>> {
  const problems: Record<string, string> = {};
  if (!(await executable(chromiumPath))) problems.chromium = `Chromium executable not found at ${chromiumPath} (CHROMIUM_PATH)`;
  if (!(await onPath("pulseaudio"))) problems.pulseaudio = "pulseaudio binary not found on PATH";
  try {
    await store.check();
  } catch (error) {
    problems.storage = error instanceof Error ? error.message : String(error);
  }
  return problems;
}
