/**
 * The listeners of this control plane: up to MAX_LISTENERS per session, each with its own token.
 * The token is a bearer credential in the WebSocket URL's path (as the ingest token): 256 random
 * bits, kept only as a SHA-256 digest and compared in constant time, so neither a memory dump nor
 * response timing gives away a usable token. A token lives until DELETE or the end of its
 * session; its WebSocket may reconnect meanwhile (after a network drop or a 1008), one at a time.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import type { SessionStatus } from "../../../shared/ipc/messages.ts";
import { MAX_LISTENERS, type ListenFormat } from "../../../shared/listen/protocol.ts";

/** 32 bytes = 256 bits: guessing is hopeless even at millions of attempts per second. */
const TOKEN_BYTES = 32;

const digest = (token: string): Buffer => createHash("sha256").update(token, "utf8").digest();

/**
 * A connected WebSocket of a listener; closing it with a code ends the consumer's socket. With a
 * session's final status, a listener of events is told that status first unless it already was.
 */
export interface ListenerConnection {
  close(code: number, reason: string, finalStatus?: SessionStatus | null): void;
}

export interface Listener {
  /** Not secret: names the listener in log lines (the token never does). */
  readonly id: string;
  readonly sessionId: string;
  readonly format: ListenFormat;
  readonly events: boolean;
  readonly socketPath: string;
  /** The live WebSocket; null between connections. */
  connection: ListenerConnection | null;
}

interface Entry extends Listener {
  readonly digest: Buffer;
}

export class ListenerRegistry {
  readonly #sessions = new Map<string, Entry[]>();
  /** Opens in flight per session: counted against the limit before the first await. */
  readonly #opening = new Map<string, number>();

  /** Claims one of the session's listener slots synchronously; false when all are taken. */
  reserve(sessionId: string): boolean {
    const used = (this.#sessions.get(sessionId)?.length ?? 0) + (this.#opening.get(sessionId) ?? 0);
    if (used >= MAX_LISTENERS) return false;
    this.#opening.set(sessionId, (this.#opening.get(sessionId) ?? 0) + 1);
    return true;
  }

  release(sessionId: string): void {
    const n = (this.#opening.get(sessionId) ?? 1) - 1;
    if (n <= 0) this.#opening.delete(sessionId);
    else this.#opening.set(sessionId, n);
  }

  /** Records a reserved listener and returns its token (the only time it exists in clear). */
  open(sessionId: string, options: { format: ListenFormat; events: boolean; socketPath: string }): { token: string; listener: Listener } {
    const token = randomBytes(TOKEN_BYTES).toString("base64url");
    const entry: Entry = { id: randomUUID(), sessionId, ...options, connection: null, digest: digest(token) };
    this.release(sessionId);
    this.#sessions.set(sessionId, [...(this.#sessions.get(sessionId) ?? []), entry]);
    return { token, listener: entry };
  }

  /** The listener whose token this is; undefined for an unknown or revoked one. */
  match(sessionId: string, token: string): Listener | undefined {
    const wanted = digest(token);
    // Every entry is compared (equal-length digests): the time taken says nothing about which matched.
    let found: Entry | undefined;
    for (const entry of this.#sessions.get(sessionId) ?? []) if (timingSafeEqual(entry.digest, wanted)) found = entry;
    return found;
  }

  count(sessionId: string): number {
    return this.#sessions.get(sessionId)?.length ?? 0;
  }

  /** Forgets the listener (its URL stops working) and closes its WebSocket with `code`. */
  revoke(listener: Listener, code: number, reason: string, finalStatus?: SessionStatus | null): void {
    const list = this.#sessions.get(listener.sessionId) ?? [];
    const rest = list.filter((e) => e !== listener);
    if (rest.length > 0) this.#sessions.set(listener.sessionId, rest);
    else this.#sessions.delete(listener.sessionId);
    listener.connection?.close(code, reason, finalStatus);
  }

  /** Every listener of the session is forgotten and closed (the session ended, with `finalStatus`). */
  closeSession(sessionId: string, code: number, reason: string, finalStatus?: SessionStatus | null): void {
    for (const entry of this.#sessions.get(sessionId) ?? []) this.revoke(entry, code, reason, finalStatus);
  }

  closeAll(code: number, reason: string): void {
    for (const sessionId of [...this.#sessions.keys()]) this.closeSession(sessionId, code, reason);
  }
}
