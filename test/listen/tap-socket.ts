/**
 * For the page tap's tests (page-tap.test.ts, encoded-path.test.ts): a socket pair as the worker
 * hands a tap its output, the tap writing into one end and the test reading the other.
 */
import { connect, createServer, type Socket } from "node:net";
import { join } from "node:path";
import type { TestContext } from "node:test";

export interface Reader {
  pcm(): Buffer;
  /** Bytes received so far. */
  readonly bytes: number;
}

/** The tap's end and a reader of the other, in `dir`; both closed after `t`. */
export async function socketPair(t: TestContext, dir: string): Promise<{ tapEnd: Socket; reader: Reader }> {
  const path = join(dir, `listen-${Math.random().toString(16).slice(2)}.sock`);
  const accepted = new Promise<Socket>((resolve) => {
    const server = createServer((s) => {
      server.close();
      resolve(s);
    }).listen(path);
  });
  const client = connect(path);
  const chunks: Buffer[] = [];
  let bytes = 0;
  client.on("data", (c: Buffer) => (chunks.push(c), (bytes += c.length)));
  const tapEnd = await accepted;
  t.after(() => {
    client.destroy();
    tapEnd.destroy();
  });
  return { tapEnd, reader: { pcm: () => Buffer.concat(chunks), get bytes() { return bytes; } } };
}
