/**
 * The open live streams of this control plane, one per session (decisions.md), each with its
 * ingest token. The token is a bearer credential handed to an audio producer (Authentication 1):
 * 256 random bits, kept only as a SHA-256 digest and compared in constant time, so neither a
 * memory dump nor response timing gives away a usable token.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** 32 bytes = 256 bits: guessing is hopeless even at millions of attempts per second. */
const TOKEN_BYTES = 32;

const digest = (token: string): Buffer => createHash("sha256").update(token, "utf8").digest();

export interface ActiveIngest {
  /** Ends the PUT now (stream closed, session over): its socket to the worker is destroyed. */
  end(): void;
}

export interface OpenStream {
  readonly sessionId: string;
  readonly format: string;
  readonly socketPath: string;
  ingest: ActiveIngest | null;
}

interface Entry extends OpenStream {
  readonly digest: Buffer;
}

export class StreamRegistry {
  readonly #streams = new Map<string, Entry>();
  /** Sessions whose open is in flight: a racing second open must see "already open" at once. */
  readonly #opening = new Set<string>();

  /** Claims the session's one stream slot synchronously; false when it is taken. */
  reserve(sessionId: string): boolean {
    if (this.#streams.has(sessionId) || this.#opening.has(sessionId)) return false;
    this.#opening.add(sessionId);
    return true;
  }

  release(sessionId: string): void {
    this.#opening.delete(sessionId);
  }

  /** Records a reserved stream as open and returns its token (the only time it exists in clear). */
  open(sessionId: string, socketPath: string, format: string): string {
    const token = randomBytes(TOKEN_BYTES).toString("base64url");
    this.#opening.delete(sessionId);
    this.#streams.set(sessionId, { sessionId, format, socketPath, ingest: null, digest: digest(token) });
    return token;
  }

  /** The session's stream when `token` is its token; undefined for an unknown or closed one. */
  match(sessionId: string, token: string): OpenStream | undefined {
    const entry = this.#streams.get(sessionId);
    // Digests have equal lengths, so timingSafeEqual neither throws nor leaks the token's length.
    if (!entry || !timingSafeEqual(entry.digest, digest(token))) return undefined;
    return entry;
  }

  /** Forgets the stream (the ingest URL stops working) and ends an ongoing PUT. */
  close(sessionId: string): boolean {
    const entry = this.#streams.get(sessionId);
    if (!entry) return false;
    this.#streams.delete(sessionId);
    entry.ingest?.end();
    return true;
  }
}
