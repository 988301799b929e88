/**
 * The page tap's encoded path, in the page (a part of page-script.ts's script): the meeting's
 * WebRTC audio as it arrives from the network, before the browser decodes and plays it, so that
 * a listener needs neither the browser's output pulled in short pieces nor the page reading its
 * tracks (README, live audio out: those two were 12.5 of the first listener's ~19 % of a core).
 *
 * Each audio receiver the page gets is given an RTCRtpScriptTransform on one dedicated Worker of
 * this script, as soon as it exists (a transceiver the page adds, before the description that
 * starts it; one the remote offer makes, in its `track` event, before the page's own listeners):
 * a pass-through that, for a receiver a listener hears, also sends a copy of each frame over a
 * WebSocket to the worker process (encoded-receiver.ts), which decodes, mixes and serves it.
 * The WebSocket is held by a SharedWorker of the page's (the carrier), to which the Worker hands
 * its messages over a MessagePort: DevTools reports every message a page or its dedicated
 * Worker sends on a WebSocket (Network.webSocketFrameSent, the payload in base64) to the bot's
 * Playwright, which decodes and dispatches each; it does not attach to shared workers.
 * bench/listen/carrier-ab.ts (25 messages a second): Playwright's process 2.3-3.0 → 1.0-1.5 % of
 * a core, the browser's main process 2.8 → 2.15; the hop adds 0-0.5 ms. A page that cannot make a
 * SharedWorker (an opaque origin, a browser without them, a carrier whose script is refused) has
 * the Worker open it itself.
 * Chromium 156 runs a transform only when it is given before the receiver starts (measured: given
 * in the `track` event of a transceiver the page added itself, as a client that makes the offer
 * does, no frame passes it; given at `addTransceiver`, every one), and a receiver whose transform
 * is taken away again goes silent (measured), so the transform stays for the receiver's life and
 * is given only once its Worker has proved it runs: a Worker a strict CSP or Trusted Types
 * refuses, or a page that uses encoded streams of its own (`encodedInsertableStreams`, or a
 * transform of its own set later), leaves those receivers to the tracks' reading, as does a
 * WebSocket that does not open (the page's `connect-src`) and a receiver no frame has passed yet
 * (its codec unknown). The Worker does nothing but pass each frame on while nobody listens.
 *
 * A message holds one or more records, each a frame: `[u16 record length][u32 source id][u32 RTP
 * timestamp][u16 sequence number][u8 codec][payload]`, little-endian (ENCODED_RECORD_HEADER_BYTES),
 * the source id being the page tap's own (`g|id|gain`), the codec one of ENCODED_CODECS (Teams
 * sends Opus; G.711 is what a plain RTP server may send). A receiver on another codec (its first
 * frame says) is read in the page.
 */

/** `[u16 record length][u32 source id][u32 RTP timestamp][u16 sequence number][u8 codec]`. */
export const ENCODED_RECORD_HEADER_BYTES = 13;

/** Codecs the worker decodes (encoded-receiver.ts), by their number in a record. */
export const ENCODED_CODECS = { "audio/opus": 1, "audio/pcmu": 2, "audio/pcma": 3 } as const;

/**
 * The Worker: a pass-through transform per receiver, and a WebSocket for the copies listened to,
 * `batch` frames to a message (a message costs the browser about the same whatever it holds).
 */
const workerSource = (url: string, batch: number): string => `
  const URL_ = ${JSON.stringify(url)};
  const CODECS = ${JSON.stringify(ENCODED_CODECS)};
  const BATCH = ${batch};
  const CODEC_CHECK_EVERY = 50;
  // Frames that say nothing to hear: comfort noise and DTMF ride the same receiver.
  const QUIET = new Set(["audio/cn", "audio/telephone-event"]);
  const on = new Map();
  const codecOf = new Map();
  // The WebSocket: the carrier's, through \`port\`, or (a page without the carrier) \`ws\`, its own.
  let port = null;
  let ws = null;
  let open = false;
  // The message being filled: records are written straight into it (no array per frame).
  const out = new Uint8Array(65536);
  const view = new DataView(out.buffer);
  let queued = 0;
  let records = 0;
  let timer = 0;
  const opened = (value) => {
    open = value;
    if (!open) { queued = 0; records = 0; }
    postMessage({ t: "ws", open });
  };
  const carried = (p) => {
    port = p;
    port.onmessage = (m) => { if (m.data && m.data.t === "ws") opened(m.data.open === true); };
    // A carrier that is gone (its process crashed) closes the port, where the browser says so.
    port.addEventListener("close", () => { if (open) opened(false); });
    port.postMessage({ t: "connect", url: URL_ });
  };
  const connect = () => {
    if (port) { port.onmessage = null; port.close(); port = null; }
    try { ws = new WebSocket(URL_); } catch { opened(false); return; }
    ws.binaryType = "arraybuffer";
    ws.onopen = () => opened(true);
    ws.onclose = () => opened(false);
  };
  const flush = () => {
    if (timer) { clearTimeout(timer); timer = 0; }
    if (records === 0) return;
    if (open && port) {
      const message = out.slice(0, queued).buffer;
      port.postMessage(message, [message]);
    }
    // A worker that stopped reading loses frames rather than pile them up here (the carrier too).
    else if (open && ws.bufferedAmount < 65536) ws.send(out.subarray(0, queued));
    queued = 0;
    records = 0;
  };
  const copy = (id, codec, frame, meta) => {
    const data = new Uint8Array(frame.data);
    // A frame without payload is a sender's padding (a Chromium sender's come every 5 s): no audio.
    if (data.length === 0) return;
    const length = ${ENCODED_RECORD_HEADER_BYTES} + data.length;
    if (queued + length > out.length) flush();
    if (length > out.length) return;
    view.setUint16(queued, length, true);
    view.setUint32(queued + 2, id, true);
    view.setUint32(queued + 6, meta.rtpTimestamp >>> 0, true);
    view.setUint16(queued + 10, meta.sequenceNumber & 0xffff, true);
    view.setUint8(queued + 12, codec);
    out.set(data, queued + ${ENCODED_RECORD_HEADER_BYTES});
    queued += length;
    if (++records >= BATCH) flush();
    else if (!timer) timer = setTimeout(flush, 25 * BATCH);
  };
  onmessage = (m) => {
    const d = m.data;
    if (d && d.t === "on") on.set(d.rid, d.id);
    else if (d && d.t === "off") on.delete(d.rid);
    // The page's carrier (once), or word that it has none (its script refused: after the carrier).
    else if (d && d.t === "carrier" && !port && !ws) carried(d.port);
    else if (d && d.t === "direct" && !ws) connect();
  };
  onrtctransform = (e) => {
    const t = e.transformer;
    const rid = t.options && t.options.rid;
    let seen = 0;
    t.readable.pipeThrough(new TransformStream({
      transform(frame, c) {
        try {
          const id = on.get(rid);
          // While nobody listens a frame is only looked at now and then, for its codec.
          if (id || !codecOf.has(rid) || ++seen % CODEC_CHECK_EVERY === 0) {
            const meta = frame.getMetadata();
            const mime = typeof meta.mimeType === "string" ? meta.mimeType.toLowerCase() : "";
            if (mime && !QUIET.has(mime) && codecOf.get(rid) !== mime) { codecOf.set(rid, mime); postMessage({ t: "codec", rid, mime }); }
            const codec = CODECS[mime];
            if (id && codec && open) copy(id, codec, frame, meta);
          }
        } catch {}
        c.enqueue(frame);
      },
    })).pipeTo(t.writable).catch(() => {});
  };
  postMessage({ t: "ready" });
`;

/**
 * The carrier, a SharedWorker: the WebSocket to the worker process, opened at the Worker's word,
 * its state told back, and every message of the Worker's sent on.
 */
const CARRIER_SOURCE = `
  onconnect = (e) => {
    const port = e.ports[0];
    let ws = null;
    port.onmessage = (m) => {
      const d = m.data;
      if (d instanceof ArrayBuffer) {
        // A worker process that stopped reading loses frames rather than pile them up here.
        if (ws && ws.readyState === 1 && ws.bufferedAmount < 65536) ws.send(d);
        return;
      }
      if (!d || d.t !== "connect" || ws) return;
      try { ws = new WebSocket(d.url); } catch { port.postMessage({ t: "ws", open: false }); return; }
      ws.binaryType = "arraybuffer";
      ws.onopen = () => port.postMessage({ t: "ws", open: true });
      ws.onclose = () => port.postMessage({ t: "ws", open: false });
    };
  };
`;

/**
 * Defines `encoded` in page-script.ts's scope: `encoded.rid(track)` is the receiver's number when
 * its frames can be sent (0 when not: read the track instead), `encoded.carries(rid)` whether a
 * receiver's still can, `encoded.pending(track)` whether a track's receiver cannot yet only
 * because its first frame has yet to say its codec, `encoded.on(rid, id)` and `encoded.off(rid)`
 * start and stop sending its frames as source `id`; the script's `encodedChanged()` is called
 * when the WebSocket opens or closes, or a receiver's codec is known or changes. `url` null: no
 * encoded path.
 */
export const encodedTapSnippet = (url: string | null, batch = 1): string => `
  const encoded = (() => {
    const none = { rid: () => 0, carries: () => false, pending: () => false, on() {}, off() {} };
    const Native = window.RTCPeerConnection;
    const Transform = window.RTCRtpScriptTransform;
    if (${url === null} || !isTop || !Native || !Transform || !window.Worker) return none;
    let worker = null;
    let alive = false;
    let wsOpen = false;
    try {
      const blobUrl = URL.createObjectURL(new Blob([${JSON.stringify(url === null ? "" : workerSource(url, batch))}], { type: "text/javascript" }));
      worker = new Worker(blobUrl);
      worker.onmessage = (m) => {
        const d = m.data;
        if (d && d.t === "ready") alive = true;
        else if (d && d.t === "ws") { wsOpen = d.open === true; encodedChanged(); }
        else if (d && d.t === "codec") { codecs.set(d.rid, String(d.mime)); encodedChanged(); }
      };
      worker.onerror = () => { alive = false; };
    } catch { return none; }
    // The WebSocket in the carrier where the page can make one; in the Worker where it cannot.
    let carrier = null;
    try {
      if (!window.SharedWorker) throw new Error("no SharedWorker");
      carrier = new window.SharedWorker(URL.createObjectURL(new Blob([${JSON.stringify(CARRIER_SOURCE)}], { type: "text/javascript" })));
      carrier.onerror = () => worker.postMessage({ t: "direct" });
      worker.postMessage({ t: "carrier", port: carrier.port }, [carrier.port]);
    } catch {
      worker.postMessage({ t: "direct" });
    }
    const SUPPORTED = new Set(${JSON.stringify(Object.keys(ENCODED_CODECS))});
    const codecs = new Map();
    const byTrack = new WeakMap();
    const ours = new WeakSet();
    let nextRid = 1;
    const give = (receiver) => {
      try {
        if (!alive || !receiver || !receiver.track || receiver.track.kind !== "audio" || receiver.transform) return;
        const rid = nextRid++;
        const t = new Transform(worker, { rid });
        receiver.transform = t;
        ours.add(t);
        byTrack.set(receiver.track, { rid, receiver });
      } catch {}
    };
    // Every audio receiver of the connection, as soon as it exists: one the page makes itself
    // (addTransceiver, addTrack, an offer's legacy offerToReceiveAudio) before the description that
    // starts it is applied, one the remote side makes in its \`track\` event.
    const giveAll = (pc) => {
      if (pc[SKIP]) return;
      try { for (const t of pc.getTransceivers()) give(t.receiver); } catch {}
    };
    const SKIP = Symbol("encodedInsertableStreams");
    class TappedPeerConnection extends Native {
      constructor(...args) {
        super(...args);
        const config = args[0];
        if (config && config.encodedInsertableStreams) { this[SKIP] = true; return; }
        this.addEventListener("track", (e) => give(e.receiver));
      }
      addTransceiver(...args) { const t = super.addTransceiver(...args); giveAll(this); return t; }
      addTrack(...args) { const s = super.addTrack(...args); giveAll(this); return s; }
      setLocalDescription(...args) { giveAll(this); return super.setLocalDescription(...args); }
      setRemoteDescription(...args) { giveAll(this); return super.setRemoteDescription(...args); }
    }
    window.RTCPeerConnection = TappedPeerConnection;
    if (window.webkitRTCPeerConnection) window.webkitRTCPeerConnection = TappedPeerConnection;
    const carries = (rid) => alive && wsOpen && SUPPORTED.has(codecs.get(rid));
    return {
      rid(track) {
        const r = byTrack.get(track);
        // The page may have put a transform of its own in ours' place.
        return r && carries(r.rid) && ours.has(r.receiver.transform) ? r.rid : 0;
      },
      carries,
      pending(track) {
        const r = byTrack.get(track);
        return !!r && alive && wsOpen && !codecs.has(r.rid) && ours.has(r.receiver.transform);
      },
      on(rid, id) { worker.postMessage({ t: "on", rid, id }); },
      off(rid) { worker.postMessage({ t: "off", rid }); },
    };
  })();
`;
