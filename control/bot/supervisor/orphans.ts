/**
 * Finds and kills what a session left running: its worker, Chromium, ffmpeg and PulseAudio all
 * carry the session id in their command lines (paths under `.sessions/<id>`, the worker's
 * `--session-dir` argument), so /proc is the one place that sees them all, even after the
 * control plane that started them died (their parent is then init).
 */
import { listProcesses } from "../../../shared/process/group.ts";

/** Chromium may still be forking renderers while we kill: sweep until nothing is left. */
const SWEEP_DEADLINE_MS = 3_000;

export async function killSessionProcesses(marker: string): Promise<number[]> {
  const killed = new Set<number>();
  const deadline = performance.now() + SWEEP_DEADLINE_MS;
  for (;;) {
    const found = (await listProcesses()).filter((p) => p.pid !== process.pid && p.cmdline.includes(marker));
    if (found.length === 0) return [...killed];
    for (const p of found) {
      // The group first (a leader's helpers die with it), then the pid itself.
      if (p.pgid === p.pid && p.pgid !== process.pid) trySignal(-p.pgid);
      trySignal(p.pid);
      killed.add(p.pid);
    }
    if (performance.now() >= deadline) return [...killed];
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function trySignal(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Gone already (ESRCH) or not ours; either way nothing more to do.
  }
}
