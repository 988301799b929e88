/**
 * Caps how many password hashes run at once, process-wide.
 *
 * PBKDF2 runs on libuv's threadpool (4 threads by default). Unbounded, a login storm queues every
 * hash there: all threads busy, so anything else that needs the pool (file system, DNS, WebCrypto
 * such as jose's bearer-token verification) waits behind seconds of queued hashing. One pool
 * thread is therefore kept out of hashing's reach.
 *
 * Why not `cores` slots (enough on a quiet machine, and fewer threads competing with the event
 * loop): on a shared, loaded 2-core box, 2 hashing threads got a smaller share of the CPU than 3
 * and logins fell from ~78% to ~55% of the hash-bound limit (bench/auth.ts, A/B runs at load ~4),
 * while the refresh-probe p99 did not measurably improve.
 */

/** libuv's default pool size unless UV_THREADPOOL_SIZE says otherwise. */
const threadpool = Number(process.env.UV_THREADPOOL_SIZE) || 4;
const SLOTS = Math.max(1, threadpool - 1);

let running = 0;
const waiting: (() => void)[] = [];

/** Runs `work` once a slot is free; slots are handed out first come, first served. */
export async function withHashSlot<T>(work: () => Promise<T>): Promise<T> {
  if (running >= SLOTS) await new Promise<void>((resolve) => waiting.push(resolve));
  else running += 1;
  try {
    return await work();
  } finally {
    // Hand the slot straight to the next waiter (running stays the same), or free it.
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  }
}
