/**
 * One Chromium-heavy test file at a time. `node --test` runs files in parallel processes; two
 * files each driving real Chromium + PulseAudio + ffmpeg on a 2-core machine starve each other's
 * audio (measured: 100-300 ms gaps in recordings at load ~15), which would make continuity
 * assertions flaky. Heavy files call `await holdMediaLock()` at top level; light suites (database,
 * HTTP) keep running beside them. The lock is a directory holding the owner's pid; it is released
 * when the process exits, and a lock whose owner died is taken over.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const LOCK = join(tmpdir(), `toamaisutaa-media-lock-${process.getuid?.() ?? 0}`);

function ownerAlive(): boolean {
  try {
    const pid = Number(readFileSync(join(LOCK, "pid"), "utf8"));
    if (!Number.isInteger(pid) || pid <= 0) return false;
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but is not ours; ENOENT: the pid file is not written yet.
    return (error as NodeJS.ErrnoException).code === "EPERM" || (error as NodeJS.ErrnoException).code === "ENOENT";
  }
}

let held = false;

export async function holdMediaLock(): Promise<void> {
  if (held || process.env.TEST_MEDIA_LOCK === "0") return;
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, "pid"), String(process.pid));
      held = true;
      process.once("exit", () => rmSync(LOCK, { recursive: true, force: true }));
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if (!ownerAlive()) {
        await new Promise((r) => setTimeout(r, 200));
        if (!ownerAlive()) rmSync(LOCK, { recursive: true, force: true });
        continue;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
