/**
 * Joins that carry one `reference` run one after another on this instance (Rules 4: a retry of an
 * active reference gets that session). Without it, concurrent retries of a reference not yet
 * written each took a session slot before the unique index sent them back to the first one: they
 * were told 503 "N sessions are already running", and so was an unrelated join arriving with
 * them, while one bot ran. In cluster mode the database decides (control/cluster/placement.ts).
 */
export class ReferenceLock {
  readonly #tails = new Map<string, Promise<void>>();

  /** Runs `fn` once every earlier call with the same reference has settled; null runs at once. */
  async run<T>(reference: string | null, fn: () => Promise<T>): Promise<T> {
    if (reference === null) return fn();
    const before = this.#tails.get(reference) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = before.then(() => mine);
    this.#tails.set(reference, tail);
    await before;
    try {
      return await fn();
    } finally {
      release();
      if (this.#tails.get(reference) === tail) this.#tails.delete(reference);
    }
  }
}
