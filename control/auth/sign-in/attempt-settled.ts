/**
 * "A reserved attempt of this account has settled" (lockout.ts), within this process. A check
 * refused only because the account's budget is in flight waits for this (or for its poll
 * interval, which covers attempts settling in another process) and then tries to reserve again.
 * Wakeups are per user id and may be spurious: a woken waiter re-checks everything.
 */
const waiters = new Map<string, Set<() => void>>();

export interface SettleWait {
  /** Resolves at the next settle of this user's attempts after `settleWait` was called, or after `ms`. */
  wait(ms: number): Promise<void>;
  /** Stops listening (always call it, also after `wait`). */
  cancel(): void;
}

/** Listens from now on, so a settle between a refused reservation and `wait` is not missed. */
export function settleWait(userId: string): SettleWait {
  let wake: () => void = () => {};
  let woken = false;
  const listener = () => {
    woken = true;
    wake();
  };
  let set = waiters.get(userId);
  if (!set) waiters.set(userId, (set = new Set()));
  set.add(listener);
  let timer: NodeJS.Timeout | undefined;
  return {
    wait: (ms) =>
      woken
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            wake = resolve;
            timer = setTimeout(resolve, ms);
          }),
    cancel() {
      clearTimeout(timer);
      set.delete(listener);
      if (set.size === 0 && waiters.get(userId) === set) waiters.delete(userId);
    },
  };
}

/** One of the user's reserved attempts was recorded (success or failure) or given back. */
export function announceSettled(userId: string): void {
  const set = waiters.get(userId);
  if (!set) return;
  for (const listener of [...set]) listener();
}
