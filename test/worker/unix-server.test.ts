/**
 * The worker's unix socket servers (worker/sockets/unix-server.ts, under the ingest and listen
 * sockets): a path within sun_path's 107 bytes is used as asked; a deeper one (a long
 * RECORDINGS_DIR) gets a short private directory instead of failing with EINVAL, and both are
 * cleaned up on close. Real sockets, real connections.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { MAX_SOCKET_PATH_BYTES, openUnixServer } from "../../worker/sockets/unix-server.ts";

async function echoes(path: string): Promise<string> {
  const socket: Socket = connect(path);
  socket.write("ping");
  const [chunk] = (await Promise.race([
    new Promise((resolve) => socket.once("data", (d: Buffer) => resolve([d]))),
    new Promise((_, reject) => socket.once("error", reject)),
  ])) as Buffer[];
  socket.destroy();
  return String(chunk);
}

const echo = (socket: Socket) => socket.on("data", (d) => socket.write(d));

test("a short path is used as asked; close removes the socket file", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "sock-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const wanted = join(dir, "listen.sock");
  const server = await openUnixServer(wanted, echo);
  assert.equal(server.path, wanted);
  assert.equal(await echoes(server.path), "ping");
  await server.close();
  assert.equal(existsSync(wanted), false);
});

test("a path past sun_path's limit binds in a short private directory, removed on close", async (t) => {
  const root = mkdtempSync(join(tmpdir(), "sock-"));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const deep = join(root, "a-rather-long-recordings-directory-name".repeat(3), "0f6c1d9e-3b7a-4c55-9d0e-2f1e8a7b6c5d.work");
  mkdirSync(deep, { recursive: true });
  const wanted = join(deep, "listen.sock");
  assert.ok(Buffer.byteLength(wanted) > MAX_SOCKET_PATH_BYTES);

  const server = await openUnixServer(wanted, echo);
  assert.notEqual(server.path, wanted);
  assert.ok(Buffer.byteLength(server.path) <= MAX_SOCKET_PATH_BYTES, server.path);
  assert.ok(server.path.endsWith("/listen.sock"));
  assert.equal(statSync(dirname(server.path)).mode & 0o777, 0o700, "only this user reaches the socket");
  assert.equal(await echoes(server.path), "ping");
  await server.close();
  assert.equal(existsSync(dirname(server.path)), false);
});
