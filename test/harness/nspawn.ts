/**
 * A throwaway machine booted by systemd (systemd-nspawn, `-b`): a root of its own whose /usr is
 * this machine's (read-only), whose /etc starts as a copy of this machine's with every enabled
 * service taken away, and which shares this machine's network, so a unit in it is reached on
 * 127.0.0.1 and reaches the Teams fixture there. systemd is its PID 1; commands (systemctl,
 * journalctl) run inside it through nsenter.
 *
 * Needs root and systemd-container. No machined or system bus here: `--register=no --keep-unit`.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { statFields } from "../../shared/process/proc-stat.ts";

const run = promisify(execFile);

export interface MachineOptions {
  /** Host folders bound read-only into the machine: host path → machine path. */
  bindReadOnly: Record<string, string>;
  /** Called with the root before boot, to install units, users and files. */
  prepare(root: string): Promise<void>;
}

export interface Machine {
  root: string;
  /** Runs a command inside the machine (all its namespaces); its stdout. */
  exec(...command: string[]): Promise<string>;
  /** A unit's journal so far, one message a line. */
  journal(unit: string): Promise<string[]>;
  /** Resolves with the first journal line of `unit` matching, or rejects after timeoutMs. */
  waitForJournal(unit: string, pattern: RegExp, timeoutMs: number): Promise<string>;
  /** Halts the machine the way systemd does (every unit stopped) and removes its root. */
  halt(timeoutMs?: number): Promise<void>;
}

/** Adds a system user to the machine's /etc, as `useradd` would on it. */
export async function addSystemUser(root: string, name: string, home: string): Promise<{ uid: number; gid: number }> {
  await run("useradd", ["--prefix", root, "--system", "--user-group", "--home-dir", home, "--no-create-home", "--shell", "/usr/sbin/nologin", name]);
  const entry = readFileSync(join(root, "etc/passwd"), "utf8").split("\n").find((l) => l.startsWith(`${name}:`));
  const [, , uid, gid] = (entry ?? "").split(":");
  return { uid: Number(uid), gid: Number(gid) };
}

export async function bootMachine(options: MachineOptions): Promise<Machine> {
  const root = mkdtempSync(join(tmpdir(), "toa-machine-"));
  // mkdtemp's 0700 would shut every user but root out of the machine's "/".
  chmodSync(root, 0o755);
  for (const dir of ["usr", "opt", "var", "tmp", "root", "home", "proc", "sys", "dev", "run", "srv", "mnt"]) mkdirSync(join(root, dir));
  for (const [link, target] of [["bin", "usr/bin"], ["sbin", "usr/sbin"], ["lib", "usr/lib"], ["lib64", "usr/lib64"]] as const) symlinkSync(target, join(root, link));
  cpSync("/etc", join(root, "etc"), { recursive: true, verbatimSymlinks: true });
  const etc = (...p: string[]) => join(root, "etc", ...p);
  // A real file: nspawn looks for it before /usr is bound.
  unlinkSync(etc("os-release"));
  writeFileSync(etc("os-release"), readFileSync("/usr/lib/os-release"));
  writeFileSync(etc("machine-id"), "");
  // Nothing of this machine's own services (its databases would start again in there).
  for (const entry of readdirSync(etc("systemd/system"))) {
    if (entry.endsWith(".wants") || entry.endsWith(".requires") || entry === "default.target") rmSync(etc("systemd/system", entry), { recursive: true, force: true });
  }
  symlinkSync("/usr/lib/systemd/system/multi-user.target", etc("systemd/system/default.target"));
  mkdirSync(etc("systemd/journald.conf.d"), { recursive: true });
  writeFileSync(etc("systemd/journald.conf.d/volatile.conf"), "[Journal]\nStorage=volatile\nRateLimitBurst=0\n");
  await options.prepare(root);

  const binds = Object.entries({ "/usr": "/usr", ...options.bindReadOnly }).map(([from, to]) => `--bind-ro=${from}:${to}`);
  // The console is not read: nspawn relays it only as its buffer allows. The journal is.
  const child: ChildProcess = spawn("systemd-nspawn", ["--quiet", "--directory", root, "--register=no", "--keep-unit", "--console=passive", ...binds, "--boot"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const exited = once(child, "exit");
  const halt = async (timeoutMs = 120_000) => {
    if (child.exitCode === null && child.signalCode === null) {
      // nspawn turns SIGTERM into the machine's own halt: every unit stops as at shutdown.
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      await exited;
      clearTimeout(killer);
    }
    rmSync(root, { recursive: true, force: true });
  };

  try {
    const initPid = await machineInit(child);
    const exec = async (...command: string[]) => (await run("nsenter", ["--target", String(initPid), "--all", "--", ...command], { maxBuffer: 16 << 20 })).stdout;
    // "degraded" is a booted machine too: units of this host's /usr that cannot run in a container.
    // (systemctl fails until the machine's manager listens; then --wait holds until boot ends.)
    let state = "";
    for (const deadline = Date.now() + 120_000; !/running|degraded/.test(state); await sleep(250)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the machine did not boot: ${state} ${stderr}`);
      state = await exec("systemctl", "is-system-running", "--wait").catch((error: { stdout?: string }) => error.stdout ?? "");
    }
    const journal = async (unit: string) => (await exec("journalctl", "--no-pager", "--output=cat", "--unit", unit)).split("\n");
    return {
      root,
      exec,
      journal,
      async waitForJournal(unit, pattern, timeoutMs) {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const lines = await journal(unit);
          const line = lines.find((l) => pattern.test(l));
          if (line) return line;
          if (Date.now() > deadline) throw new Error(`no journal line ${pattern} of ${unit} within ${timeoutMs} ms:\n${lines.slice(-30).join("\n")}`);
          await sleep(500);
        }
      },
      halt,
    };
  } catch (error) {
    await halt(10_000);
    throw error;
  }
}

/** The machine's PID 1 as this machine sees it: the child of nspawn. */
async function machineInit(nspawn: ChildProcess): Promise<number> {
  for (let i = 0; i < 300; i++) {
    if (nspawn.exitCode !== null) break;
    for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        if (Number(statFields(stat)[1]) === nspawn.pid && /\((systemd|init)\)/.test(stat)) return Number(pid);
      } catch {
        // gone meanwhile
      }
    }
    await sleep(100);
  }
  throw new Error("no init process under systemd-nspawn");
}
