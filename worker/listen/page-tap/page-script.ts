/**
 * What the page tap runs inside the meeting's page (added with `addInitScript` before the page's
 * own code, as the observer's script is; a string: tsx may add helpers a page lacks). It knows
 * what the page plays, and while the worker has it running it reads that audio as the page
 * produces it, before the browser's 500 ms PulseAudio buffer (worker/browser/launch.ts), which
 * is most of the delay of a tap on the recording's sink.
 *
 * What the page plays, as Chromium's output mixes it:
 *   - media elements (audio and video, in the document or a shadow root made by script) that are
 *     playing, not muted, volume above 0: the enabled live audio tracks of their `srcObject`
 *     (Teams: one WebRTC stream, `mainAudio`), or for a `src` the element's own capture
 *     (`captureStream()`), at the element's volume;
 *   - Web Audio: every node connected to an AudioContext's destination is also connected to a
 *     MediaStreamAudioDestinationNode of that context (only while the tap runs), heard while the
 *     context is running.
 * A WebRTC track whose receiver took the encoded path (encoded-script.ts: Teams' `mainAudio`)
 * is heard from its frames, which go to the worker over the loopback; any other track is read
 * with a MediaStreamTrackProcessor (no script URL, so nothing Trusted Types or a strict CSP would
 * refuse), converted to s16le and sent through the CDP binding (PAGE_TAP_BINDING) as
 * `a|id|rate|channels|base64`, and `r|1` says some track is read so (the worker paces the sink
 * meanwhile: worker/listen/sink-pacer.ts), `r|0` that none is. `g|id|gain` sets a source's volume
 * (either path), `e|id` ends it, and `u|why` says the page plays something this tap cannot read
 * (a frame's media, an element whose media cannot be captured), after which the worker taps the
 * sink instead (worker/listen/taps.ts). A frame says that through PAGE_TAP_REPORT_BINDING, which
 * reaches frames of other sites too (their own renderer: the CDP binding is only in the page's).
 * The hooks cost nothing but bookkeeping while nobody listens.
 */
import { benchOverride } from "../../../shared/process/bench-override.ts";
import { encodedTapSnippet } from "./encoded-script.ts";

export const PAGE_TAP_GLOBAL = "__toaListenTap";
export const PAGE_TAP_BINDING = "__toaListenTapSend";
export const PAGE_TAP_REPORT_BINDING = "__toaListenTapReport";
/**
 * Audio goes out in pieces of at least this much: the sink's block while someone listens
 * (worker/listen/sink-pacer.ts), so each block the browser pulls goes out in one message. A smaller
 * piece waits for the next chunk until it is PAGE_TAP_HOLD_SLACK_MS short of a whole piece (12 ms
 * at 20: a track delivers its block as 10 ms chunks in a row, or one per 10 ms where the output
 * is paced finer).
 *
 * Each message costs about the same whatever it holds (CDP across the browser's main process,
 * Playwright's dispatch and a wake-up of the worker: ~0.5 ms of the worker's CPU alone, for 100 B
 * as for 10 kB, 50 messages a second, 2026-11-28), so pieces of 40 ms would halve that part:
 * `BENCH_SEND_MS=40 make bench-listen-parts`, alternating with 20, load 0.3-0.9: sending 9.7 / 9.3
 * → 4.3 / 5.8 % of a core, the first listener 24.0 / 23.5 → 19.2 / 20.2. But they wait for a second
 * pull of the browser: `BENCH_MIC=off BENCH_CPU=0 make bench-listen`, alternating, median / p95 ms,
 * page 105 / 178 and 108 / 128 → 133 / 163 and 122 / 171; media server 94 / 106 and 79 / 89 →
 * 135 / 227 and 106 / 119. The latency target's margin is worth more than 4 points of a core.
 */
export const PAGE_TAP_SEND_MS = 20;
export const PAGE_TAP_HOLD_SLACK_MS = 8;
/**
 * Frames to a message on the encoded path: four (80 ms of a receiver's audio). A message crossing
 * from one process to the next (the page's Worker, its carrier, the browser's network service,
 * the worker, the control plane, the consumer: each wakes the next) costs about the same whatever
 * it holds, and frames from a media server come one every 20 ms, so the message count is most of
 * a listener's cost. `BENCH_ENCODED_BATCH=4|2 BENCH_SOURCE=server BENCH_MIC=off BENCH_CPU_CASES=one
 * BENCH_CPU_ROUNDS=6 BENCH_CPU_SECONDS=10 make bench-listen`, 2026-11-29, load 0.3-0.5: the first
 * listener 1.40 ± 0.37 % of a core with four, 3.31 ± 0.25 with two (the same pair's other runs:
 * 1.11 and 2.63 against 2.68-3.13), every process's part lower (the worker 0.65 against 1.0, the
 * browser 0.9 against 1.8, the control plane 0.15 against 0.65); latency from the media server
 * 65 / 91 ms (median / p95) against 30 / 54, frames at most 95 ms apart against 70. Three did
 * not measurably save (2.78 and 2.92). The frame holding an onset waits for its message to fill:
 * the latency target (median 150, p95 250 ms) leaves room for that, and a consumer still gets
 * every 20 ms frame, two at a time, 40 ms apart (control/bot/listen/spreader.ts).
 */
export const ENCODED_BATCH = 4;

/** PAGE_TAP_SEND_MS unless TOAMAISUTAA_LISTEN_SEND_MSEC says otherwise (`make bench-listen*`: BENCH_SEND_MS). */
export function pageTapSendMs(env: NodeJS.ProcessEnv = process.env): number {
  return benchOverride("TOAMAISUTAA_LISTEN_SEND_MSEC", PAGE_TAP_SEND_MS, env);
}

/**
 * Frames to a message on the encoded path (encoded-script.ts); TOAMAISUTAA_LISTEN_ENCODED_BATCH
 * exists only so that `make bench-listen*` can A/B it (BENCH_ENCODED_BATCH).
 */
export function encodedBatch(env: NodeJS.ProcessEnv = process.env): number {
  return benchOverride("TOAMAISUTAA_LISTEN_ENCODED_BATCH", ENCODED_BATCH, env);
}

/** `encodedUrl`: where the encoded path (encoded-script.ts) sends its frames; null: tracks are read. */
export const pageTapScript = (sendMs: number = pageTapSendMs(), encodedUrl: string | null = null): string => `(() => {
  const G = ${JSON.stringify(PAGE_TAP_GLOBAL)};
  const BINDING = ${JSON.stringify(PAGE_TAP_BINDING)};
  const REPORT = ${JSON.stringify(PAGE_TAP_REPORT_BINDING)};
  const SEND_MS = ${sendMs};
  const HOLD_MS = ${sendMs - PAGE_TAP_HOLD_SLACK_MS};
  if (window[G]) return;
  const isTop = (() => { try { return window === window.top; } catch { return false; } })();
  const send = (msg) => { const f = window[BINDING]; if (typeof f === "function") { try { f(msg); } catch {} } };
  const MediaEl = window.HTMLMediaElement;
  const Node = window.AudioNode;
  const Ctx = window.AudioContext;
  const Dest = window.AudioDestinationNode;
  const Processor = window.MediaStreamTrackProcessor;
  let running = false;
  let channels = 1;
  let nextId = 1;
  let pending = false;
  let unknownSent = false;
  const ownerIds = new WeakMap();
  let nextOwner = 1;
  const ownerId = (o) => { let v = ownerIds.get(o); if (!v) { v = nextOwner++; ownerIds.set(o, v); } return v; };
  const elements = new Set();
  const contexts = new Map();
  const active = new Map();
  const streamsSeen = new WeakSet();
  const captures = new WeakMap();

  const report = (why) => { const f = window[REPORT]; if (typeof f === "function") { try { Promise.resolve(f(why)).catch(() => {}); } catch {} } };
  const unknown = (why) => { if (unknownSent) return; unknownSent = true; if (isTop) send("u|" + why); else report(why); };
  const schedule = () => { if (pending) return; pending = true; setTimeout(() => { pending = false; refresh(); }, 0); };
  let readers = 0;
  let readersSent = -1;
  // With a microphone the worker would rather hear the sink than have tracks read (tap.ts).
  let readTracks = true;
  // Whether the page reads any track (the browser's output must then be pulled in short pieces): \`r|1\` or \`r|0\`.
  const sendReaders = () => { const n = readers > 0 ? 1 : 0; if (n !== readersSent) { readersSent = n; send("r|" + n); } };
  // The encoded path opened or closed, or a receiver's codec is known: a source read from its
  // track goes over to it, one it no longer carries back to its track (the others go on).
  function encodedChanged() {
    if (!running) return;
    for (const [key, s] of active) if (!s.rid || !encoded.carries(s.rid)) stopSource(key, s);
    schedule();
  }
${encodedTapSnippet(encodedUrl, encodedBatch())}

  const origConnect = Node && Node.prototype.connect;
  const origDisconnect = Node && Node.prototype.disconnect;
  const infoOf = (ctx) => {
    let info = contexts.get(ctx);
    if (!info) {
      info = { nodes: new Map(), tee: null };
      contexts.set(ctx, info);
      try { ctx.addEventListener("statechange", schedule); } catch {}
    }
    return info;
  };
  const teeConnect = (node, outputs, tee) => { for (const o of outputs) { try { origConnect.call(node, tee, o); } catch {} } };
  if (Node && Ctx && Dest) {
    Node.prototype.connect = function (dest, output) {
      const r = origConnect.apply(this, arguments);
      try {
        if (dest instanceof Dest && dest.context instanceof Ctx) {
          const info = infoOf(dest.context);
          const outs = info.nodes.get(this) || new Set();
          outs.add(typeof output === "number" ? output : 0);
          info.nodes.set(this, outs);
          if (info.tee) teeConnect(this, outs, info.tee);
          schedule();
        }
      } catch {}
      return r;
    };
    Node.prototype.disconnect = function (what) {
      const r = origDisconnect.apply(this, arguments);
      try {
        if (arguments.length === 0) {
          for (const info of contexts.values()) info.nodes.delete(this);
          schedule();
        } else if (typeof what === "number") {
          for (const info of contexts.values()) { const outs = info.nodes.get(this); if (outs) { outs.delete(what); if (outs.size === 0) info.nodes.delete(this); } }
          schedule();
        } else if (what instanceof Dest) {
          const info = contexts.get(what.context);
          if (info && info.nodes.delete(this) && info.tee) { try { origDisconnect.call(this, info.tee); } catch {} }
          schedule();
        }
      } catch {}
      return r;
    };
  }

  const watchStream = (stream) => {
    if (streamsSeen.has(stream)) return;
    streamsSeen.add(stream);
    stream.addEventListener("addtrack", schedule);
    stream.addEventListener("removetrack", schedule);
  };
  const noteElement = (el) => {
    elements.add(el);
    const s = el.srcObject;
    if (s instanceof MediaStream) watchStream(s);
    schedule();
  };
  if (MediaEl) {
    const origPlay = MediaEl.prototype.play;
    MediaEl.prototype.play = function () { try { noteElement(this); } catch {} return origPlay.apply(this, arguments); };
    const d = Object.getOwnPropertyDescriptor(MediaEl.prototype, "srcObject");
    if (d && d.set) {
      Object.defineProperty(MediaEl.prototype, "srcObject", { configurable: true, enumerable: d.enumerable, get: d.get, set(v) { d.set.call(this, v); try { noteElement(this); } catch {} } });
    }
    // Media events do not leave a shadow tree: each shadow root made by script is watched too
    // (one the parser makes from a template is not: cross-check.ts hears what it plays).
    const onMedia = (e) => { if (e.target instanceof MediaEl) noteElement(e.target); };
    const watchRoot = (root) => { for (const type of ["play", "playing", "pause", "volumechange", "emptied", "ended", "loadstart"]) root.addEventListener(type, onMedia, true); };
    watchRoot(document);
    const origAttachShadow = window.Element && Element.prototype.attachShadow;
    if (origAttachShadow) {
      Element.prototype.attachShadow = function () { const root = origAttachShadow.apply(this, arguments); try { watchRoot(root); } catch {} return root; };
    }
  }

  // What the page plays now: [{key, track | ctx, gain}].
  const audible = () => {
    const out = [];
    for (const el of elements) {
      if (el.paused && !el.isConnected) { elements.delete(el); continue; }
      if (el.paused || el.muted || !(el.volume > 0)) continue;
      const src = el.srcObject;
      if (src instanceof MediaStream) {
        for (const t of src.getAudioTracks()) if (t.readyState === "live" && t.enabled) out.push({ key: "e" + ownerId(el) + ":" + t.id, track: t, gain: el.volume });
      } else if (src) {
        unknown("a media element plays a source object the tap cannot read");
      } else if (el.currentSrc || el.src) {
        let cap = captures.get(el);
        if (!cap) {
          try { cap = el.captureStream(); captures.set(el, cap); } catch { unknown("a media element's audio cannot be captured"); continue; }
        }
        for (const t of cap.getAudioTracks()) if (t.readyState === "live") out.push({ key: "m" + ownerId(el) + ":" + t.id, track: t, gain: el.volume });
      }
    }
    for (const [ctx, info] of contexts) {
      if (ctx.state === "closed") { contexts.delete(ctx); continue; }
      if (ctx.state === "running" && info.nodes.size > 0) out.push({ key: "c" + ownerId(ctx), ctx, info, gain: 1 });
    }
    return out;
  };

  const toBase64 = (bytes) => {
    if (typeof bytes.toBase64 === "function") return bytes.toBase64();
    let bin = "";
    for (let i = 0; i < bytes.length; i += 0x2000) bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x2000));
    return btoa(bin);
  };

  const startSource = (d) => {
    const rid = d.ctx || !d.track ? 0 : encoded.rid(d.track);
    if (!rid && !readTracks) {
      // Refused before a Web Audio context is teed or a gain announced; a receiver whose first
      // frame has yet to say its codec is waited for (encodedChanged).
      if (d.ctx || (d.track && !encoded.pending(d.track))) unknown("the page plays audio its encoded path does not carry");
      return;
    }
    let track = d.track;
    if (d.ctx) {
      if (!d.info.tee) {
        d.info.tee = d.ctx.createMediaStreamDestination();
        for (const [node, outs] of d.info.nodes) teeConnect(node, outs, d.info.tee);
      }
      track = d.info.tee.stream.getAudioTracks()[0];
    }
    if (!track) return;
    const id = nextId++;
    const source = { id, gain: d.gain, reader: null, rid, ctx: d.ctx, info: d.info, stopped: false };
    active.set(d.key, source);
    send("g|" + id + "|" + d.gain);
    if (rid) { encoded.on(rid, id); return; }
    readers++;
    let reader;
    try { reader = new Processor({ track, maxBufferSize: 50 }).readable.getReader(); } catch { active.delete(d.key); readers--; unknown("a track could not be read"); return; }
    source.reader = reader;
    let parts = [];
    let frames = 0;
    let rate = 0;
    let ch = 0;
    let timer = null;
    const flush = () => {
      if (timer) { clearTimeout(timer); timer = null; }
      if (frames === 0) return;
      const pcm = new Int16Array(frames * ch);
      let at = 0;
      for (const p of parts) { pcm.set(p, at); at += p.length; }
      parts = [];
      frames = 0;
      send("a|" + id + "|" + rate + "|" + ch + "|" + toBase64(new Uint8Array(pcm.buffer)));
    };
    const take = (data) => {
      const n = data.numberOfFrames;
      const inCh = data.numberOfChannels;
      const outCh = Math.min(inCh, channels);
      if (frames > 0 && (data.sampleRate !== rate || outCh !== ch)) flush();
      rate = data.sampleRate;
      ch = outCh;
      const planes = [];
      for (let c = 0; c < Math.min(inCh, 2); c++) {
        const plane = new Float32Array(n);
        data.copyTo(plane, { planeIndex: c, format: "f32-planar" });
        planes.push(plane);
      }
      const pcm = new Int16Array(n * outCh);
      for (let i = 0; i < n; i++) {
        if (outCh === 1) {
          let v = planes.length > 1 ? (planes[0][i] + planes[1][i]) / 2 : planes[0][i];
          v = v < -1 ? -1 : v > 1 ? 1 : v;
          pcm[i] = v < 0 ? v * 32768 : v * 32767;
        } else {
          for (let c = 0; c < 2; c++) {
            let v = planes[c][i];
            v = v < -1 ? -1 : v > 1 ? 1 : v;
            pcm[i * 2 + c] = v < 0 ? v * 32768 : v * 32767;
          }
        }
      }
      parts.push(pcm);
      frames += n;
      if ((frames * 1000) / rate >= SEND_MS) flush();
      else if (!timer) timer = setTimeout(flush, HOLD_MS);
    };
    (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          try { if (!source.stopped) take(value); } finally { value.close(); }
        }
      } catch {}
      if (!source.stopped) { flush(); send("e|" + id); readers--; }
      if (active.get(d.key) === source) active.delete(d.key);
      schedule();
    })();
  };

  const stopSource = (key, source) => {
    if (source.stopped) return;
    source.stopped = true;
    active.delete(key);
    if (source.rid) encoded.off(source.rid);
    else readers--;
    try { source.reader && source.reader.cancel(); } catch {}
    send("e|" + source.id);
  };

  const refresh = () => {
    const now = audible();
    if (!isTop) { if (now.length > 0) unknown("a frame of the page plays audio"); return; }
    if (!running) return;
    const keys = new Set();
    for (const d of now) {
      keys.add(d.key);
      const s = active.get(d.key);
      if (!s) startSource(d);
      else if (s.gain !== d.gain) { s.gain = d.gain; send("g|" + s.id + "|" + d.gain); }
    }
    for (const [key, s] of active) if (!keys.has(key)) stopSource(key, s);
    sendReaders();
  };

  Object.defineProperty(window, G, {
    value: Object.freeze({
      start(ch, read) {
        if (!Processor) return "no MediaStreamTrackProcessor";
        channels = ch === 2 ? 2 : 1;
        readTracks = read !== false;
        running = true;
        unknownSent = false;
        refresh();
        return unknownSent ? "unknown" : "ok";
      },
      stop() {
        running = false;
        for (const [key, s] of active) stopSource(key, s);
        readersSent = -1;
        for (const info of contexts.values()) {
          if (!info.tee) continue;
          for (const node of info.nodes.keys()) { try { origDisconnect.call(node, info.tee); } catch {} }
          for (const t of info.tee.stream.getTracks()) t.stop();
          info.tee = null;
        }
      },
      sources() { return [...active.keys()]; },
    }),
  });
})();`;
