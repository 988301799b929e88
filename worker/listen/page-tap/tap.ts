/**
 * The worker's end of the page tap (page-script.ts): a CDP binding receives what the page plays,
 * as it plays it; the mixer (mixer.ts) sums the sources as the browser's output does; each
 * format listened to gets its own conversion (resampler.ts) and its socket to the control plane
 * (shared/listen/wire.ts, `audio`: raw s16le). The page reads its tracks only while a format is
 * open here.
 *
 * Against the tap on the recording's sink (../capture.ts), this one hears the audio before the
 * browser's PulseAudio buffer (500 ms without a microphone: worker/browser/launch.ts). It hears
 * what page-script.ts knows the page plays; when the page plays something else (`u`), it says so
 * once and the caller moves every listener to the sink (../taps.ts).
 */
import type { Socket } from "node:net";
import type { BrowserContext, CDPSession, Page } from "playwright-core";
import type { Logger } from "../../../shared/log/logger.ts";
import { formatKey, type ListenFormat } from "../../../shared/listen/protocol.ts";
import { MAX_WORKER_BACKLOG_BYTES } from "../../../shared/listen/wire.ts";
import { AUDIBLE_AMPLITUDE } from "./cross-check.ts";
import { TapMixer } from "./mixer.ts";
import type { EncodedReceiver } from "./encoded-receiver.ts";
import { PAGE_TAP_BINDING, PAGE_TAP_GLOBAL, PAGE_TAP_REPORT_BINDING, pageTapScript, pageTapSendMs } from "./page-script.ts";
import { Resampler } from "./resampler.ts";
import { within } from "../../../shared/timeout.ts";

/**
 * When the page plays nothing (no audible source, all muted) no audio comes from it, but a
 * listener gets audio all the same, as it would from the sink: silence, filled in once the audio
 * given to the outputs is this far behind the clock (more than any burst the browser's pulls
 * make) and none has come for as long, then every SILENCE_CHECK_MS. While audio flows the check
 * sleeps until that deadline (~3 wake-ups a second, not 25: each costs the worker ~0.2 ms of CPU
 * on these machines). Audio that keeps coming is never cut into by silence, however far behind
 * the clock it runs (it started late, or came after silence was filled): silence put between two
 * of its messages would be a hole in what is said, and the audio after it later still.
 */
const SILENCE_AFTER_MS = 300;
const SILENCE_CHECK_MS = 40;
/** One message holds a piece of 20 ms or so: 1 s of 48 kHz stereo in base64 is far above it. */
const MAX_MESSAGE_CHARS = 300_000;
/** How long the way out waits on the page: a dead or hung one is not waited for. */
const IN_PAGE_TIMEOUT_MS = 2_000;

interface Output {
  format: ListenFormat;
  socket: Socket;
  /** From the mix's rate to the format's (made with the mix's first audio). */
  resampler: Resampler | null;
}

export interface PageTapOptions {
  page: Page;
  logger: Logger;
  /** The page plays audio this tap cannot read: every output should move to the sink's tap. */
  onUncapturable: (why: string) => void;
  /** The tap starts serving its first output (true) or stops serving its last (false). */
  onActive?: (active: boolean) => void;
  /** While it serves, the page starts (true) or stops (false) reading tracks (`r|`): the sink should be paced. */
  onReading?: (reading: boolean) => void;
  /** The encoded path's end (encoded-receiver.ts), whose URL the page script was given. */
  encoded?: EncodedReceiver | null;
  /** False: a source the encoded path cannot carry makes the tap give way to the sink's (default true). */
  readTracks?: boolean;
}

/**
 * Whether a session's listeners hear the page tap. Without a microphone always: the browser's
 * PulseAudio buffer is 500 ms (worker/browser/launch.ts) and a tap on the sink hears the meeting
 * ~500 ms late. With one, where the encoded path (encoded-script.ts) can carry what the page plays:
 * the browser then keeps Chromium's own ~30 ms buffer and paces the sink itself, so the sink's
 * tap is as quick, but it costs ~10 % of a core (README, live audio out) against ~1 for the
 * encoded path; a track the page would have to read sends the listeners to the sink instead
 * (pageTapReadsTracks). TOAMAISUTAA_LISTEN_TAP=page|sink exists only so that `make bench-listen`
 * can A/B them (BENCH_TAP).
 */
export function pageTapEnabled(mic: boolean, env: NodeJS.ProcessEnv = process.env): boolean {
  const forced = env.TOAMAISUTAA_LISTEN_TAP;
  return forced === "page" ? true : forced === "sink" ? false : !mic || encodedPathEnabled(env);
}

/** Whether the page tap may read tracks in the page (pacing the sink meanwhile): without a microphone. */
export function pageTapReadsTracks(mic: boolean): boolean {
  return !mic;
}

/**
 * Whether the page tap takes the meeting's WebRTC audio as encoded frames (encoded-script.ts)
 * where it can. TOAMAISUTAA_LISTEN_ENCODED=0 exists only so that `make bench-listen*` can A/B it
 * (BENCH_ENCODED).
 */
export function encodedPathEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.TOAMAISUTAA_LISTEN_ENCODED !== "0";
}

/** Adds the page script to every page of the context, before the page's own code. */
export async function installPageTap(context: BrowserContext, encodedUrl: string | null = null): Promise<void> {
  await context.addInitScript({ content: pageTapScript(pageTapSendMs(), encodedUrl) });
}

export class PageTap {
  readonly #page: Page;
  readonly #log: Logger;
  readonly #onUncapturable: (why: string) => void;
  readonly #onActive: (active: boolean) => void;
  readonly #onReading: (reading: boolean) => void;
  readonly #encoded: EncodedReceiver | null;
  readonly #readTracks: boolean;
  /** What the page last said of its reading of tracks (`r|`). */
  #reading = false;
  readonly #outputs = new Set<Output>();
  #cdp: CDPSession | null = null;
  #mixer: TapMixer | null = null;
  /** Each source's volume, kept for a mixer made again (another channel count). */
  readonly #gains = new Map<string, number>();
  #uncapturable: string | null = null;
  #channels: 1 | 2 = 1;
  /** The rate the encoded path decodes to. */
  #encodedRate = 0;
  #stopped = false;
  /** The clock (performance.now()) the audio given to the outputs so far reaches. */
  #coveredUntil = 0;
  /** When the last audio (not filled silence) was given to the outputs (performance.now()). */
  #lastAudioAt = -Infinity;
  #silenceTimer: NodeJS.Timeout | null = null;
  /** When the mix last held sound (performance.now()): cross-check.ts compares it with the sink. */
  #lastAudibleAt = -Infinity;

  constructor(options: PageTapOptions) {
    this.#page = options.page;
    this.#log = options.logger;
    this.#onUncapturable = options.onUncapturable;
    this.#onActive = options.onActive ?? (() => undefined);
    this.#onReading = options.onReading ?? (() => undefined);
    this.#encoded = options.encoded ?? null;
    this.#readTracks = options.readTracks ?? true;
    options.page.on("framenavigated", (frame) => {
      if (frame === this.#page.mainFrame() && this.#outputs.size > 0) void this.#startInPage();
    });
  }

  /** Binds the page's messages; before the page opens the meeting, so a frame can report at once. */
  async bind(): Promise<void> {
    const cdp = await this.#page.context().newCDPSession(this.#page);
    this.#cdp = cdp;
    cdp.on("Runtime.bindingCalled", (e: { name: string; payload: string }) => {
      if (e.name === PAGE_TAP_BINDING) this.#onMessage(e.payload);
    });
    // A binding is put in the page's contexts only for a session with the runtime domain on.
    await cdp.send("Runtime.enable");
    await cdp.send("Runtime.addBinding", { name: PAGE_TAP_BINDING });
    // A frame's report, from any frame of the page (Playwright's binding reaches other sites' too).
    await this.#page.exposeBinding(PAGE_TAP_REPORT_BINDING, (_source, why: unknown) => {
      if (typeof why === "string") this.#fail(why.slice(0, 200));
    });
  }

  /** Why the page tap cannot hear everything the page plays, or null. */
  get uncapturable(): string | null {
    return this.#uncapturable;
  }

  /** When what it serves last held sound (performance.now()), or -Infinity. */
  get lastAudibleAt(): number {
    return this.#lastAudibleAt;
  }

  /** Stops serving for good: the page plays what this tap does not hear (`why`); listeners move to the sink. */
  giveUp(why: string): void {
    this.#fail(why);
  }

  /** Starts writing `format` into `socket`; false when this tap cannot serve (use the sink's). */
  open(format: ListenFormat, socket: Socket): boolean {
    if (this.#uncapturable || this.#stopped || !this.#cdp) return false;
    const output: Output = { format, socket, resampler: null };
    this.#outputs.add(output);
    if (this.#outputs.size === 1) {
      this.#onActive(true);
      this.#coveredUntil = performance.now();
      this.#checkSilenceIn(SILENCE_AFTER_MS);
    }
    // The control plane sends nothing after its hello; reading lets its close be seen at once.
    socket.resume();
    const drop = () => this.#remove(output);
    socket.once("end", drop);
    socket.once("close", drop);
    socket.on("error", drop);
    const channels = Math.max(...[...this.#outputs].map((o) => o.format.channels)) as 1 | 2;
    // The encoded path decodes to the highest rate listened to (the mix's, unless the page reads a track first).
    const rate = Math.max(...[...this.#outputs].map((o) => o.format.sampleRate));
    if (!this.#mixer || channels !== this.#channels || (this.#encoded && rate !== this.#encodedRate)) {
      this.#channels = channels;
      this.#encodedRate = rate;
      this.#mixer = new TapMixer(channels);
      for (const [id, gain] of this.#gains) this.#mixer.setGain(id, gain);
    }
    this.#encoded?.serve(channels, rate, (id, r, ch, data) => this.#onAudio(id, r, ch, data));
    void this.#startInPage();
    this.#log.debug({ format: formatKey(format), outputs: this.#outputs.size }, "page tap output opened");
    return true;
  }

  /** Hands the sockets over (to the sink's tap) and stops the page's reading. */
  takeOutputs(): { format: ListenFormat; socket: Socket }[] {
    const taken = [...this.#outputs].map(({ format, socket }) => {
      socket.removeAllListeners("end");
      socket.removeAllListeners("close");
      socket.removeAllListeners("error");
      socket.pause();
      return { format, socket };
    });
    this.#outputs.clear();
    if (taken.length > 0) this.#idle();
    void this.#stopInPage();
    return taken;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const o of this.#outputs) o.socket.destroy();
    if (this.#outputs.size > 0) this.#idle();
    this.#outputs.clear();
    await this.#stopInPage();
    await within(this.#cdp?.detach().catch(() => undefined) ?? Promise.resolve(), IN_PAGE_TIMEOUT_MS);
    this.#cdp = null;
    await this.#encoded?.close();
  }

  #remove(output: Output): void {
    if (!this.#outputs.delete(output)) return;
    output.socket.destroy();
    if (this.#outputs.size > 0) return;
    this.#idle();
    void this.#stopInPage();
  }

  /** The last output went. */
  #idle(): void {
    if (this.#silenceTimer) clearTimeout(this.#silenceTimer);
    this.#silenceTimer = null;
    this.#setReading(false);
    this.#onActive(false);
  }

  #setReading(reading: boolean): void {
    if (reading === this.#reading) return;
    this.#reading = reading;
    this.#onReading(reading);
  }

  #checkSilenceIn(ms: number): void {
    // Looked at after the sockets were read (setImmediate runs after I/O): when this process was
    // held up, the audio waiting for it is taken in before any silence is.
    const timer = setTimeout(() => setImmediate(() => this.#silenceTimer === timer && this.#fillSilence()), ms);
    this.#silenceTimer = timer;
  }

  #fillSilence(): void {
    const until = performance.now() - SILENCE_AFTER_MS;
    // Audio came in time, or lately: look again when it would be late, were nothing more to come.
    const quietFrom = Math.max(this.#coveredUntil, this.#lastAudioAt);
    if (quietFrom >= until) return this.#checkSilenceIn(Math.max(SILENCE_CHECK_MS, quietFrom - until));
    this.#checkSilenceIn(SILENCE_CHECK_MS);
    const ms = until - this.#coveredUntil;
    this.#coveredUntil = until;
    for (const o of this.#outputs) {
      const frames = Math.round((o.format.sampleRate * ms) / 1000);
      this.#send(o, Buffer.alloc(frames * o.format.channels * 2));
    }
  }

  async #startInPage(): Promise<void> {
    try {
      const result = await this.#page.evaluate(
        ([g, ch, read]) => (window as unknown as Record<string, { start(c: number, r: boolean): string } | undefined>)[g]?.start(ch, read) ?? "missing",
        [PAGE_TAP_GLOBAL, this.#channels, this.#readTracks] as const,
      );
      if (result === "missing" || result.startsWith("no ")) this.#fail(result === "missing" ? "the page tap's script is not in the page" : result);
    } catch (err) {
      // A navigation destroyed the context: framenavigated starts it again in the new document.
      if (!this.#page.isClosed()) this.#log.debug({ err }, "page tap: start in the page failed");
    }
  }

  async #stopInPage(): Promise<void> {
    if (this.#page.isClosed()) return;
    // A page whose renderer died (or hangs) never answers, and Playwright waits on it: bounded.
    const stopping = this.#page.evaluate((g) => (window as unknown as Record<string, { stop(): void } | undefined>)[g]?.stop(), PAGE_TAP_GLOBAL);
    await within(stopping.catch(() => undefined), IN_PAGE_TIMEOUT_MS);
  }

  #fail(why: string): void {
    if (this.#uncapturable) return;
    this.#uncapturable = why;
    this.#log.info({ why }, "page tap: the page plays audio it cannot read; listeners hear the sink");
    this.#onUncapturable(why);
  }

  #onMessage(payload: string): void {
    // `u|why`, `r|0|1`, `g|id|gain`, `e|id`, `a|id|rate|channels|base64` (page-script.ts). The
    // page's own code can call the binding too: what it sends is checked, and it can say no more
    // than the page could play anyway.
    if (payload.length > MAX_MESSAGE_CHARS) return;
    const kind = payload.charAt(0);
    if (kind === "u") return this.#fail(payload.slice(2, 202));
    if (kind === "r") return this.#setReading(payload === "r|1" && this.#outputs.size > 0);
    const idEnd = payload.indexOf("|", 2);
    const id = payload.slice(2, idEnd < 0 ? undefined : idEnd);
    if (kind === "g") {
      const gain = Number(payload.slice(idEnd + 1));
      if (idEnd < 0 || !Number.isFinite(gain) || gain < 0 || gain > 1) return;
      this.#gains.set(id, gain);
      this.#mixer?.setGain(id, gain);
      return;
    }
    const mixer = this.#mixer;
    if (kind === "e") {
      this.#gains.delete(id);
      this.#encoded?.end(id);
      if (mixer) this.#write(mixer.end(id));
      return;
    }
    if (kind !== "a" || !mixer || this.#outputs.size === 0 || idEnd < 0) return;
    const rateEnd = payload.indexOf("|", idEnd + 1);
    const chEnd = rateEnd < 0 ? -1 : payload.indexOf("|", rateEnd + 1);
    if (chEnd < 0) return;
    const rate = Number(payload.slice(idEnd + 1, rateEnd));
    const channels = Number(payload.slice(rateEnd + 1, chEnd));
    const bytes = Buffer.from(payload.slice(chEnd + 1), "base64");
    if (!(Number.isInteger(rate) && rate >= 8000 && rate <= 192_000) || !(channels === 1 || channels === 2) || bytes.length % (2 * channels) !== 0) return;
    const data = new Float32Array(bytes.length / 2);
    for (let i = 0; i < data.length; i++) data[i] = bytes.readInt16LE(i * 2) / 32768;
    this.#onAudio(id, rate, channels, data);
  }

  /** Audio of source `id` (interleaved floats), read in the page or decoded from its frames. */
  #onAudio(id: string, rate: number, channels: 1 | 2, data: Float32Array): void {
    const mixer = this.#mixer;
    if (!mixer || this.#outputs.size === 0) return;
    this.#write(mixer.push(id, rate, channels, data));
  }

  #write(mix: Float32Array): void {
    if (mix.length === 0) return;
    for (let i = 0; i < mix.length; i++) {
      const v = mix[i]!;
      if (v >= AUDIBLE_AMPLITUDE || v <= -AUDIBLE_AMPLITUDE) {
        this.#lastAudibleAt = performance.now();
        break;
      }
    }
    const mixCh = this.#channels;
    const rate = this.#mixer?.rate ?? 0;
    for (const o of this.#outputs) {
      const ch = o.format.channels;
      let input = mix;
      if (ch !== mixCh) {
        const frames = mix.length / mixCh;
        input = new Float32Array(frames * ch);
        // Only 2 → 1 happens (the mix has the most channels any output wants): the average of L and R.
        for (let i = 0; i < frames; i++) input[i] = (mix[i * 2]! + mix[i * 2 + 1]!) / 2;
      }
      if (o.resampler?.inRate !== rate) o.resampler = new Resampler(rate, o.format.sampleRate, ch);
      const out = o.resampler.push(input);
      if (out.length === 0) continue;
      const pcm = Buffer.allocUnsafe(out.length * 2);
      for (let i = 0; i < out.length; i++) {
        const v = out[i]!;
        pcm.writeInt16LE(v >= 1 ? 32767 : v <= -1 ? -32768 : Math.round(v * 32767), i * 2);
      }
      this.#send(o, pcm);
    }
    if (rate > 0) this.#coveredUntil = Math.max(this.#coveredUntil, performance.now() - SILENCE_AFTER_MS) + ((mix.length / mixCh) * 1000) / rate;
    this.#lastAudioAt = performance.now();
  }

  #send(o: Output, pcm: Buffer): void {
    if (o.socket.destroyed) return;
    if (o.socket.writableLength > MAX_WORKER_BACKLOG_BYTES) {
      this.#log.warn({ backlog_bytes: o.socket.writableLength }, "page tap: the control plane stopped reading; dropping the stream");
      this.#remove(o);
      return;
    }
    // The frames of one message of the page's (ENCODED_BATCH on the encoded path) leave in one
    // write: the control plane then wakes once for them and sends them on in one TCP write.
    if (o.socket.writableCorked === 0) {
      o.socket.cork();
      process.nextTick(() => o.socket.uncork());
    }
    o.socket.write(pcm);
  }
}
