import { listProcesses } from "../../../shared/process/group.ts";

/**
 * Live (non-zombie) processes whose command line mentions dir: after a test, none of its
 * chromium, ffmpeg or pulseaudio processes may survive. Polls briefly, since SIGKILLed
 * processes take a moment to leave /proc.
 */
export async function survivorsMentioning(dir: string, waitMs = 3_000): Promise<string[]> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const left = (await listProcesses())
      .filter((p) => p.pid !== process.pid && p.cmdline.includes(dir))
      .map((p) => `${p.pid} ${p.cmdline.slice(0, 120)}`);
    if (left.length === 0 || Date.now() >= deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
