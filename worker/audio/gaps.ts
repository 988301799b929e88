/**
 * Audio gaps, detected live from the worker's own PulseAudio daemon (issue #13): a gap is
 * meeting audio the recording lost because Chromium's playback stream into the `rec` sink ran
 * dry (under load its audio service was not scheduled in time) and the sink mixed silence in its
 * place. Silence in the meeting is not a gap: Chromium writes it on time, as zeros.
 *
 * The signal is the daemon's own account of each underrun, in its debug log (pulse.ts runs it at
 * `--log-level=debug --log-time=1`). protocol-native.c logs, from the sink's thread,
 *   `Implicit underrun of '<stream>'`             when a stream has nothing left to mix, once per
 *                                                 underrun (not again until data was mixed), and
 *   `Requesting rewind due to end of underrun.`   when data arrives again (the name is not given);
 * the difference of their time stamps is the gap. Checked against the recording (rec.monitor
 * through ffmpeg/parec, zero runs in the file): pacat at 50 ms latency, SIGSTOPped 300 ms: logged
 * 263 ms, recorded 275 ms; its small load underruns 35/49/2 ms: recorded 37.5/50/12.5 ms; Chromium's
 * stream (500 ms PULSE_LATENCY_MSEC) with its audio service SIGSTOPped 400 ms: logged 116 ms,
 * recorded 132 ms; 800 ms in a bot session: 2 underruns, 508 ms, recorded as one 526 ms silence; a
 * 500 ms pacat stream on a busy box: 10 and 26 ms, recorded 10.4 and 10.5 ms. The sink mixes whole
 * blocks and rewinds some of the silence it mixed ahead, so a gap in the file differs from the
 * daemon's by about a block (10-20 ms here) either way; the count is the daemon's, one per underrun.
 *
 * The other candidates give nothing: `pactl subscribe` emits no event on an underrun (measured),
 * `pactl list sink-inputs` has no underrun counter, the stream's underflow callback reaches only
 * the client that owns the stream (Chromium), and guessing from silence in the monitor cannot
 * tell a quiet meeting from a starved stream. The debug log costs next to nothing, because in
 * steady playback the daemon writes nothing: ~80 lines (8 KB) at its start, ~150 (14 KB) for a
 * session's ffmpeg and Chromium streams, ~7 (0.6 KB) per underrun. Daemon CPU, warning vs debug,
 * A/B alternating, 2 runs each (scratch script: the daemon of pulse.ts, parec on rec.monitor,
 * sox | pacat; load 4.8-9.4 on the shared 2 cores): a steady 500 ms stream for 60 s, 22/20 vs
 * 20/22 ticks (0.35 % of a core either way, no lines); a starved 5 ms stream for 30 s (~12
 * underruns/s, ~80 lines/s), 284/312 vs 339/261 ticks (~10 % of a core either way: the log is
 * lost in the noise). The worker already read that pipe for the daemon's warnings.
 *
 * The end line carries no stream name: when two streams are starved at once (the bot's
 * microphone playback on `mic` and Chromium on `rec`), the first end closes the oldest open
 * underrun, so durations are then approximate; the count stays exact (one start line each). An
 * underrun that ends with its stream corked or freed (the page stopped its audio, the browser
 * closed) never ends in data and is not a gap: it is dropped (a cork, unnamed too, drops the
 * oldest). A closing browser's stream under-ran 23 ms, got data, then was corked and freed
 * (measured): the session listens only from admission until it starts to leave (run.ts).
 */

/** A stretch of meeting audio the sink replaced with silence. */
export interface AudioGap {
  /** The starved stream's media name (Chromium's is "Playback"). */
  stream: string;
  /** How long the stream was starved, by the daemon's clock. */
  seconds: number;
  /** performance.now() when the gap was seen to end (it began `seconds` before). */
  endedAt: number;
}

export type GapListener = (gap: AudioGap) => void;

/** `(  41.639|   0.262) D: [null-sink] protocol-native.c: Implicit underrun of 'tone'` */
const LINE = /^\(\s*(\d+\.\d+)\|\s*\d+\.\d+\)\s+[A-Z]: \[[^\]]*\] ([\w.-]+): (.*)$/;
const UNDERRUN = /^Implicit underrun of '(.*)'$/;
const UNDERRUN_END = "Requesting rewind due to end of underrun.";
/** A stream paused by its client (Chromium stops its output); the name is not given either. */
const CORKED = "Requesting rewind due to corking";
const CREATED = /^Created input (\d+) "(.*)" on (\S+) with /;
const FREED = /^Freeing input (\d+) "(.*)"$/;

interface Open {
  stream: string;
  startSec: number;
  /** The stream plays into the watched sink (only those gaps are reported). */
  watched: boolean;
}

/**
 * Follows one daemon's log (fed line by line) and reports the gaps of the streams playing into
 * `sink`. It keeps the streams' sinks from their creation on, so it must see the log from the
 * daemon's start; listeners may come and go (the session listens only while in the call).
 */
export class GapDetector {
  readonly #sink: string;
  readonly #inputs = new Map<string, { stream: string; sink: string }>();
  #open: Open[] = [];
  readonly #listeners = new Set<GapListener>();

  constructor(sink: string) {
    this.#sink = sink;
  }

  /** Subscribes to gaps; returns the unsubscribe. */
  onGap(listener: GapListener): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /** One line of the daemon's stderr; anything not understood is ignored. */
  feed(line: string): void {
    const m = LINE.exec(line);
    if (!m) return;
    const at = Number(m[1]);
    const file = m[2];
    const text = m[3] ?? "";
    if (file === "protocol-native.c") {
      if (text === UNDERRUN_END) return this.#ended(at);
      const underrun = UNDERRUN.exec(text);
      if (underrun) this.#started(underrun[1] ?? "", at);
      return;
    }
    if (file !== "sink-input.c") return;
    // Paused while starved: what follows the pause is new audio, not the end of a gap.
    if (text === CORKED) return void this.#open.shift();
    const created = CREATED.exec(text);
    if (created) {
      this.#inputs.set(created[1] ?? "", { stream: created[2] ?? "", sink: created[3] ?? "" });
      return;
    }
    const freed = FREED.exec(text);
    if (freed) {
      this.#inputs.delete(freed[1] ?? "");
      const stream = freed[2] ?? "";
      // Starved to its end: no audio came back, so nothing was lost between sounds.
      if (![...this.#inputs.values()].some((i) => i.stream === stream)) this.#open = this.#open.filter((o) => o.stream !== stream);
    }
  }

  #started(stream: string, at: number): void {
    // The daemon logs a stream's underrun only after data was mixed again; an entry still open
    // here lost its end line to another stream (see the header): it ended before this line.
    const stale = this.#open.findIndex((o) => o.stream === stream);
    if (stale >= 0) this.#close(stale, at);
    const watched = [...this.#inputs.values()].some((i) => i.stream === stream && i.sink === this.#sink);
    this.#open.push({ stream, startSec: at, watched });
  }

  #ended(at: number): void {
    // Data into a stream that was not known to be starved (a new stream's first writes): no gap.
    if (this.#open.length > 0) this.#close(0, at);
  }

  #close(index: number, at: number): void {
    const [gap] = this.#open.splice(index, 1);
    if (!gap?.watched) return;
    const found: AudioGap = { stream: gap.stream, seconds: Math.max(0, at - gap.startSec), endedAt: performance.now() };
    for (const listener of this.#listeners) listener(found);
  }
}
