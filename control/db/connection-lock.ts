/**
 * The one lock of the embedded database's one connection (db/sqlite-driver.ts).
 *
 * SQLite has no per-request transactions on a shared connection: whatever runs on the connection
 * while a `BEGIN` is open is part of that transaction. Prisma's adapter takes its mutex only for
 * interactive transactions, so a plain statement issued by another request while one was open
 * joined it and vanished on its rollback, after its own request had answered success (issue #14:
 * a rolled-back passkey verification erased lockout counters, logouts and revocations). Every
 * statement on the connection therefore holds this lock: a transaction holds it from BEGIN to
 * COMMIT or ROLLBACK, a plain statement for itself, and whoever comes later waits its turn (FIFO).
 */
export class ConnectionLock {
  #held = false;
  readonly #waiting: (() => void)[] = [];

  /** True while a transaction or statement holds the connection, or someone waits for it. */
  get busy(): boolean {
    return this.#held || this.#waiting.length > 0;
  }

  /** Resolves with the release function once the connection is ours; release exactly once. */
  async acquire(): Promise<() => void> {
    if (this.#held) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#held = true;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // Hand the lock straight to the next waiter (still held), or free it.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#held = false;
    };
  }

  /**
   * Runs `work` holding the lock. A free lock runs it without yielding first, so synchronous work
   * (better-sqlite3) needs no turn of the event loop when nobody else wants the connection.
   */
  async run<T>(work: () => T | Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await work();
    } finally {
      release();
    }
  }

  /**
   * Runs synchronous `work` at once when the lock is free (nothing can interleave with code that
   * does not yield), otherwise after the holders before it.
   */
  runSync<T>(work: () => T): T | Promise<T> {
    if (!this.busy) return work();
    return this.run(work);
  }
}
