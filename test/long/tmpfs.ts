/** A small tmpfs mounted for one test (a disk that can fill up); null when mounting is impossible here. */
import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";

export function mountTmpfs(t: TestContext, sizeMb: number): string | null {
  const dir = mkdtempSync(join(tmpdir(), "i15-tmpfs-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeMb}m`, "tmpfs", dir], { stdio: "pipe" });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    t.skip(`cannot mount a tmpfs here (needs root / CAP_SYS_ADMIN): ${(err as Error).message.split("\n")[0]}`);
    return null;
  }
  t.after(() => {
    execFileSync("umount", ["-l", dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

export function freeMb(dir: string): number {
  const s = statfsSync(dir);
  return (s.bavail * s.bsize) / 1024 / 1024;
}

/**
 * Fills the filesystem until about `leaveKb` KiB are free. Others write meanwhile (a recording),
 * so it goes in 1 MiB steps, re-reading the free space, and a full disk (ENOSPC) simply ends it.
 */
export function fillUntil(dir: string, leaveKb: number): string {
  const path = join(dir, "filler.bin");
  const fd = openSync(path, "w");
  const chunk = Buffer.alloc(1024 * 1024);
  try {
    for (;;) {
      const s = statfsSync(dir);
      const left = s.bavail * s.bsize - leaveKb * 1024;
      if (left <= 0) break;
      writeSync(fd, chunk, 0, Math.min(chunk.length, left));
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
  } finally {
    closeSync(fd);
  }
  return path;
}
