// Real storage emulators for the storage tests, each a process or server on 127.0.0.1.
import { spawn, execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import type { TestContext } from "node:test";
import { Writable } from "node:stream";
import { createLogger, type Logger } from "../../shared/log/logger.ts";
import { freePort } from "../harness/free-port.ts";

const run = promisify(execFile);

/** Azurite's published development account (public, documented by Microsoft; not a secret). */
export const AZURITE_ACCOUNT = "devstoreaccount1";
export const AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
/** s3rver accepts exactly this key pair. */
export const S3RVER_KEY = "S3RVER";

export function azuriteConnectionString(port: number, key = AZURITE_KEY): string {
  return `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${key};BlobEndpoint=http://127.0.0.1:${port}/${AZURITE_ACCOUNT};`;
}

export { freePort };

export async function tempDir(t: TestContext, prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `storage-${prefix}-`));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function waitForPort(port: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    await sleep(100);
  }
  throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
}

export interface RunningEmulator {
  port: number;
  stop(): Promise<void>;
}

/** Starts azurite-blob in its own process group; `stop` kills the group and waits for exit. */
export function startAzurite(port: number, location: string): Promise<RunningEmulator> {
  return startProcess(port, "node_modules/.bin/azurite-blob", [
    "--blobHost", "127.0.0.1", "--blobPort", String(port), "--location", location,
    "--silent", "--skipApiVersionCheck", "--loose", "--disableTelemetry",
  ]);
}

/**
 * s3rver as a separate process (its CLI), for measurements where an in-process server's memory
 * would be counted as the uploader's.
 */
export function startS3rverProcess(port: number, directory: string, bucket: string): Promise<RunningEmulator> {
  return startProcess(port, "node_modules/.bin/s3rver", [
    "-d", directory, "-a", "127.0.0.1", "-p", String(port), "--silent", "--configure-bucket", bucket,
  ]);
}

/**
 * A store that goes down and comes back, for outage tests: a TCP forwarder on its own port to an
 * emulator that keeps running. `down()` closes the port and cuts every connection through it (a
 * client gets ECONNREFUSED, as from a stopped store); `up()` opens the same port again. Stopping
 * and restarting Azurite instead loses a container created just before whenever its close is slow
 * (it saves its containers only every 5 s or as it closes): CI saw ContainerNotFound, twice.
 */
export interface OutageProxy {
  readonly port: number;
  up(): Promise<void>;
  down(): Promise<void>;
}

export async function outageProxy(targetPort: number): Promise<OutageProxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  const track = (s: Socket) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
    s.on("error", () => s.destroy());
  };
  return {
    port,
    async up() {
      if (server) return;
      const listening = createServer((client) => {
        const upstream = connect(targetPort, "127.0.0.1");
        track(client);
        track(upstream);
        client.pipe(upstream).pipe(client);
        client.once("close", () => upstream.destroy());
        upstream.once("close", () => client.destroy());
      });
      await new Promise<void>((resolve, reject) => listening.once("error", reject).listen(port, "127.0.0.1", () => resolve()));
      server = listening;
    },
    async down() {
      const closing = server;
      server = null;
      if (!closing) return;
      const closed = new Promise<void>((resolve) => closing.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

const STOP_GRACE_MS = 30_000;

async function startProcess(port: number, command: string, args: string[]): Promise<RunningEmulator> {
  const child = spawn(command, args, { detached: true, stdio: "ignore" });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    if (child.pid !== undefined) process.kill(-child.pid, "SIGTERM");
    // Azurite saves its containers to `location` only as it closes (or every 5 s): a SIGKILL before
    // that loses a container the test created, and a "store back after an outage" then answers
    // ContainerNotFound. Closing can take seconds on a loaded machine, so the kill waits long.
    const timer = setTimeout(() => child.pid !== undefined && process.kill(-child.pid, "SIGKILL"), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  };
  try {
    await waitForPort(port);
  } catch (error) {
    await stop();
    throw error;
  }
  return { port, stop };
}

interface S3rverInstance {
  run(): Promise<{ port: number }>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: {
  port: number;
  address: string;
  silent: boolean;
  directory: string;
  configureBuckets: { name: string }[];
}) => S3rverInstance;

// s3rver is CommonJS without type declarations; this is the part of its API the tests use.
const S3rver = createRequire(import.meta.url)("s3rver") as S3rverConstructor;

/** Starts s3rver in-process with the given buckets (created before it listens). */
export async function startS3rver(port: number, directory: string, buckets: string[]): Promise<RunningEmulator> {
  const server = new S3rver({
    port,
    address: "127.0.0.1",
    silent: true,
    directory,
    configureBuckets: buckets.map((name) => ({ name })),
  });
  await server.run();
  let closed = false;
  return {
    port,
    stop: async () => {
      if (closed) return;
      closed = true;
      await server.close();
    },
  };
}

/** A short sine tone in WAV or FLAC, made by ffmpeg. */
export async function makeTone(dir: string, name: string, seconds = 1): Promise<string> {
  const path = join(dir, name);
  await run("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", `sine=frequency=440:duration=${seconds}`, "-ar", "48000", "-ac", "2", path]);
  return path;
}

/** A logger whose lines are kept for assertions (and not printed). */
export function capturingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString("utf8").split("\n")) if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  return { logger: createLogger({ level: "debug", destination }), lines };
}
