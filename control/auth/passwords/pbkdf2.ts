/**
 * The default password hasher: PBKDF2-HMAC-SHA256 through node:crypto's async pbkdf2, which runs
 * on libuv's threadpool so a login storm does not stall the event loop, and never on every pool
 * thread at once (hash-slots.ts), so other pool work does not queue behind the storm.
 *
 * Stored format: `pbkdf2-sha256$<iterations>$<pepperVersion>$<salt b64>$<hash b64>`. Everything a
 * future verify needs is in the row, so iterations, salt/hash sizes and peppers can change without
 * invalidating old rows; an old row verifies and reports `needsRehash` (re-hashed at the next
 * successful sign-in). Pepper version 0 means "no pepper".
 *
 * The pepper is applied as HMAC-SHA256(pepper, password) before PBKDF2: a stolen database alone
 * (without the configuration) cannot be brute-forced offline.
 */
import { createHmac, pbkdf2, randomBytes, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";
import type { Config } from "../../config/index.ts";
import type { PasswordHasher } from "../../app/host.ts";
import { withHashSlot } from "./hash-slots.ts";

const pbkdf2Unbounded = promisify(pbkdf2);
const pbkdf2Async = (...args: Parameters<typeof pbkdf2Unbounded>): Promise<Buffer> => withHashSlot(() => pbkdf2Unbounded(...args));

const SCHEME = "pbkdf2-sha256";
/**
 * A stored row naming more iterations than this is refused instead of verified: one forged or
 * corrupted row must not pin a threadpool thread for minutes per login (DoS guard; the spec's
 * Limits table: "a stored row may name up to 50000000").
 */
export const MAX_STORED_ITERATIONS = 50_000_000;
/** Below this a row is treated as corrupt rather than weak (no real deployment ever used it). */
const MIN_STORED_ITERATIONS = 1_000;
const MAX_STORED_BYTES = 1024;

export interface Pbkdf2Settings {
  iterations: number;
  saltBytes: number;
  hashBytes: number;
  /** Current pepper and its version; version 0 when there is no pepper. */
  pepper: { version: number; secret: string | undefined };
  /** Pepper secrets by version, for rows hashed before a rotation. */
  retired: ReadonlyMap<number, string>;
}

export function pbkdf2Settings(config: Config): Pbkdf2Settings {
  const ll = config.LocalLogin;
  const retired = new Map<number, string>();
  for (const [version, secret] of Object.entries(ll.RetiredPeppers)) retired.set(Number(version), secret);
  return {
    iterations: ll.Pbkdf2Iterations,
    saltBytes: ll.SaltSizeBytes,
    hashBytes: ll.HashSizeBytes,
    pepper: ll.Pepper === undefined ? { version: 0, secret: undefined } : { version: ll.PepperVersion, secret: ll.Pepper },
    retired,
  };
}

interface ParsedHash {
  iterations: number;
  pepperVersion: number;
  salt: Buffer;
  hash: Buffer;
}

export function parseStoredHash(stored: string): ParsedHash | null {
  const parts = stored.split("$");
  if (parts.length !== 5 || parts[0] !== SCHEME) return null;
  const [, iter, pep, salt64, hash64] = parts as [string, string, string, string, string];
  if (!/^\d{1,9}$/.test(iter) || !/^\d{1,9}$/.test(pep)) return null;
  const iterations = Number(iter);
  const salt = Buffer.from(salt64, "base64");
  const hash = Buffer.from(hash64, "base64");
  if (iterations < MIN_STORED_ITERATIONS || iterations > MAX_STORED_ITERATIONS) return null;
  if (salt.length === 0 || hash.length === 0 || salt.length > MAX_STORED_BYTES || hash.length > MAX_STORED_BYTES) return null;
  return { iterations, pepperVersion: Number(pep), salt, hash };
}

function peppered(password: string, secret: string | undefined): Buffer {
  const raw = Buffer.from(password.normalize("NFC"), "utf8");
  return secret === undefined ? raw : createHmac("sha256", secret).update(raw).digest();
}

export function createPbkdf2Hasher(settings: Pbkdf2Settings): PasswordHasher {
  const pepperOf = (version: number): { known: boolean; secret: string | undefined } => {
    if (version === 0) return { known: true, secret: undefined };
    if (version === settings.pepper.version) return { known: true, secret: settings.pepper.secret };
    const retired = settings.retired.get(version);
    return retired === undefined ? { known: false, secret: undefined } : { known: true, secret: retired };
  };
  return {
    async hash(password) {
      const salt = randomBytes(settings.saltBytes);
      const key = await pbkdf2Async(peppered(password, settings.pepper.secret), salt, settings.iterations, settings.hashBytes, "sha256");
      return [SCHEME, settings.iterations, settings.pepper.version, salt.toString("base64"), key.toString("base64")].join("$");
    },
    async verify(password, stored) {
      const parsed = parseStoredHash(stored);
      if (parsed === null) return { ok: false, needsRehash: false };
      const pepper = pepperOf(parsed.pepperVersion);
      // A row under a pepper version nobody configured cannot verify; refusing is the only safe answer.
      if (!pepper.known) return { ok: false, needsRehash: false };
      const key = await pbkdf2Async(peppered(password, pepper.secret), parsed.salt, parsed.iterations, parsed.hash.length, "sha256");
      // Constant-time compare: response timing must not leak how many leading bytes matched.
      const ok = timingSafeEqual(key, parsed.hash);
      const needsRehash =
        ok &&
        (parsed.iterations < settings.iterations ||
          parsed.pepperVersion !== settings.pepper.version ||
          parsed.salt.length < settings.saltBytes ||
          parsed.hash.length < settings.hashBytes);
      return { ok, needsRehash };
    },
  };
}
