import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** One adapter stage entered (or action taken), with its time and the signal that told. */
export interface Step {
  at: string;
  stage: string;
  screen?: string | null;
  signal?: string | null;
  detail?: string;
}

/** Where the Teams adapter reports its steps; optional everywhere, so the adapter runs without it. */
export interface StepSink {
  step(stage: string, fields?: Omit<Step, "at" | "stage">): void;
}

export const STEPS_FILE = "steps.json";
/** A meeting of hours adds a step per screen change only; this bounds a page that flickers. */
const MAX_STEPS = 2000;

/**
 * `steps.json` of a session (issue #16), kept for every session: rewritten (aside, then renamed)
 * shortly after each step, so a worker killed mid-session still leaves the steps up to then.
 */
export class StepLog implements StepSink {
  readonly steps: Step[] = [];
  #writing: Promise<void> = Promise.resolve();
  #dirty = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly dir: string | null,
    private readonly redact: (text: string) => string,
  ) {}

  step(stage: string, fields: Omit<Step, "at" | "stage"> = {}): void {
    const entry: Step = { at: new Date().toISOString(), stage };
    for (const [k, v] of Object.entries(fields)) {
      if (v !== undefined) (entry as unknown as Record<string, unknown>)[k] = typeof v === "string" ? this.redact(v) : v;
    }
    if (this.steps.length >= MAX_STEPS) this.steps.splice(1, 1);
    this.steps.push(entry);
    this.#dirty = true;
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      void this.flush();
    }, 200);
  }

  /** Writes the file now (after any write under way); never throws. */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (!this.dir || !this.#dirty) return this.#writing;
    this.#dirty = false;
    const dir = this.dir;
    const body = JSON.stringify({ steps: this.steps }, null, 2);
    this.#writing = this.#writing.then(async () => {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const tmp = join(dir, `.${STEPS_FILE}.tmp`);
      await writeFile(tmp, body, { mode: 0o600 });
      await rename(tmp, join(dir, STEPS_FILE));
    }).catch(() => undefined);
    return this.#writing;
  }
}
