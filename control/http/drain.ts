/**
 * Requests in flight, for a clean stop: every request is counted from its arrival until its
 * response has been sent or its connection closed. Once draining, every response not yet started
 * carries `Connection: close`, so a keep-alive client (a load balancer, wrk) moves to another
 * instance instead of queueing more work on this one, and `idle()` resolves when the last request
 * in flight is done: only then may the database close.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";

export interface RequestDrain {
  /** Wraps the app's listener so its requests are counted. */
  wrap(listener: RequestListener): RequestListener;
  readonly inFlight: number;
  readonly draining: boolean;
  start(): void;
  /** Resolves when no request is in flight (at once when none is). */
  idle(): Promise<void>;
  /** Resolves when no request is in flight and none has arrived for `ms`. */
  quiet(ms: number): Promise<void>;
}

export function createRequestDrain(): RequestDrain {
  const open = new Set<ServerResponse>();
  let draining = false;
  let waiters: (() => void)[] = [];
  let lastArrival = Number.NEGATIVE_INFINITY;
  const idle = (): Promise<void> => (open.size === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve)));
  const settle = (res: ServerResponse): void => {
    if (!open.delete(res) || open.size > 0) return;
    const ready = waiters;
    waiters = [];
    for (const w of ready) w();
  };
  return {
    wrap(listener) {
      return (req: IncomingMessage, res: ServerResponse) => {
        open.add(res);
        lastArrival = performance.now();
        res.once("finish", () => settle(res));
        res.once("close", () => settle(res));
        if (draining) res.setHeader("Connection", "close");
        listener(req, res);
      };
    },
    get inFlight() {
      return open.size;
    },
    get draining() {
      return draining;
    },
    start() {
      draining = true;
      for (const res of open) if (!res.headersSent) res.setHeader("Connection", "close");
    },
    idle,
    async quiet(ms) {
      for (;;) {
        await idle();
        const left = lastArrival + ms - performance.now();
        if (left <= 0 && open.size === 0) return;
        await new Promise((resolve) => setTimeout(resolve, Math.max(left, 1)));
      }
    },
  };
}
