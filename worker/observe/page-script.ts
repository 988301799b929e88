/**
 * What the observer runs inside the Teams page (added with `addInitScript`, so it is in place
 * before the page's own code and needs no `<script>` element, which Trusted Types would refuse:
 * teams-dom.md "2026 facts"). A string, not a function: tsx may add helpers a page lacks.
 *
 * Every 100 ms (issue #17: "sampled at least every 100 ms") it takes one sample:
 *   - `csrc`: the contributing sources of the mixed `mainAudio` receiver whose timestamp moved
 *     since the last sample, i.e. that were in a frame played in the last 100 ms. Recency, not
 *     `audioLevel`, which some browsers leave at 0; comparing a source's timestamp with its own
 *     last value needs no assumption about the clock the browser uses for it;
 *   - `heard`: for those sources, when their latest frame was played (epoch ms), which stays
 *     exact when a busy page runs the sampler late;
 *   - `level`: the loudest synchronization source's audioLevel (the mix itself); without the RTP
 *     audio-level extension (no audioLevel there) the receivers' own measure of the audio they
 *     played (inbound-rtp totalAudioEnergy over totalSamplesDuration, since the last sample);
 *     null if unknown or once the mix has carried a CSRC;
 *   - `captions`: authors of live caption entries (teams-dom.md "Captions") whose text changed
 *     since the last sample, read only while the mix has carried no CSRC;
 *   - `tiles`: names of the video tiles whose voice-level outline shows speech.
 * It also collects `dsh` (dominant speaker history) messages from any data channel, and on each
 * `drain()` reads the call object, the People pane rows and the tiles' names.
 *
 * Cheap by design (issue #17: under 1% of a core per bot for the whole observation): once the mix
 * has carried a CSRC, the sampler reads only the contributing sources (the level and the tiles'
 * styles serve only a mix without them, fusion.ts); `drain()` answers one JSON string (a string
 * crosses CDP as it is, with no object walk on either side), and leaves out `view` (call object,
 * People pane, tiles) when it is what the last drain sent, sending it whole every VIEW_EVERY drains
 * all the same so that a drain lost on the way costs nothing for long.
 */
export const OBSERVER_GLOBAL = "__toaObserver";

export const PAGE_SCRIPT = `(() => {
  if (window.${OBSERVER_GLOBAL}) return;
  const MAX = 3000;
  const VIEW_EVERY = 10;
  const receivers = [];
  let csrcHeard = false;
  // Some packet has carried the audio-level extension: its level is the mix's, no stats needed.
  let sourcesLevelKnown = false;
  let lastView = null;
  let drains = 0;
  const samples = [];
  const dsh = [];
  const lastTs = new Map();
  const push = (list, item) => { list.push(item); if (list.length > MAX) list.shift(); };
  const onMessage = (e) => {
    if (typeof e.data !== "string" || e.data.indexOf("dsh") < 0) return;
    let value;
    try { value = JSON.parse(e.data); } catch { return; }
    for (const m of Array.isArray(value) ? value : [value]) {
      if (m && m.type === "dsh" && Array.isArray(m.history)) push(dsh, { t: Date.now(), history: m.history.filter((s) => Number.isFinite(s)) });
    }
  };
  const watchChannel = (dc) => { try { dc.addEventListener("message", onMessage); } catch {} };
  const Native = window.RTCPeerConnection;
  if (Native) {
    class ObservedPeerConnection extends Native {
      constructor(...args) {
        super(...args);
        this.addEventListener("track", (e) => {
          if (e.track && e.track.kind === "audio") {
            receivers.push({ receiver: e.receiver, ids: [e.track.id, ...(e.streams || []).map((s) => s.id)].join(" ") });
          }
        });
        this.addEventListener("datachannel", (e) => watchChannel(e.channel));
      }
      createDataChannel(...args) {
        const dc = super.createDataChannel(...args);
        watchChannel(dc);
        return dc;
      }
    }
    window.RTCPeerConnection = ObservedPeerConnection;
    if (window.webkitRTCPeerConnection) window.webkitRTCPeerConnection = ObservedPeerConnection;
  }
  const EMAIL = /^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$/;
  const RING = /rgba?\\(\\s*1[0-4]\\d\\s*,\\s*1[2-4]\\d\\s*,\\s*2[3-5]\\d/;
  const tileName = (tile) => {
    const tag = tile.querySelector('[data-tid="participant-info-nametag"]');
    const text = tag ? (tag.textContent || "").trim() : "";
    return { name: text || null, tid: tile.getAttribute("data-tid") || null, aria: tile.getAttribute("aria-label") || null };
  };
  const speaking = (tile) => {
    const outline = tile.querySelector('[data-tid="voice-level-stream-outline"]');
    if (tile.matches('[data-is-speaking="true"]') || tile.querySelector('[data-is-speaking="true"]')) return true;
    if (!outline) return false;
    if (outline.closest(".vdi-frame-occlusion") || outline.querySelector(".vdi-frame-occlusion")) return true;
    const ring = getComputedStyle(outline, "::before");
    const opacity = ringHeading(outline) ?? ring.opacity;
    return Number(opacity) === 1 && (RING.test(ring.borderColor) || RING.test(ring.backgroundColor) || RING.test(ring.boxShadow));
  };
  // Where a running transition or animation of the ring's opacity is heading (its last keyframe),
  // or null. A page that is not drawing (worker/browser/drawing.ts) advances them only on its
  // rare frames, so a ring fading in would read as half-lit for up to a second; its end state is
  // what the page means, and is known as soon as the fade starts.
  const ringHeading = (outline) => {
    if (typeof outline.getAnimations !== "function") return null;
    try {
      for (const a of outline.getAnimations({ subtree: true })) {
        const effect = a.effect;
        if (a.playState !== "running" || !effect || effect.target !== outline || effect.pseudoElement !== "::before") continue;
        const frames = effect.getKeyframes().filter((f) => f.opacity !== undefined);
        if (frames.length > 0) return frames[frames.length - 1].opacity;
      }
    } catch {}
    return null;
  };
  const tiles = () => Array.from(document.querySelectorAll('[data-stream-type="Video"]'));
  // The receivers' energy counters, read in the background (getStats is asynchronous): the level
  // of what they played between two reads, for a mix whose packets carry no audio level.
  const energy = new Map();
  let statsLevel = null;
  let statsAt = 0;
  let statsBusy = false;
  const readStats = (list) => {
    if (statsBusy) return;
    statsBusy = true;
    Promise.all(list.map((r) => r.receiver.getStats().then((report) => {
      let level = null;
      report.forEach((st) => {
        if (st.type !== "inbound-rtp" || typeof st.totalAudioEnergy !== "number" || typeof st.totalSamplesDuration !== "number") return;
        const last = energy.get(r);
        energy.set(r, { e: st.totalAudioEnergy, d: st.totalSamplesDuration });
        const dd = last ? st.totalSamplesDuration - last.d : 0;
        if (dd > 0) level = { level: Math.max(level ? level.level : 0, Math.sqrt(Math.max(0, st.totalAudioEnergy - last.e) / dd)), seconds: dd };
      });
      return level;
    }).catch(() => null))).then((levels) => {
      const known = levels.filter((l) => l !== null);
      const now = Date.now();
      // Nothing played since the last read (the output pulls in bursts): the last level holds,
      // for a while; a receiver that stopped playing altogether is silent, not stuck at a level.
      if (known.length > 0) {
        statsLevel = Math.max(...known.map((l) => l.level));
        // The measure is of the audio played since the last read: it stands for the middle of it.
        statsAt = now - (Math.max(...known.map((l) => l.seconds)) * 1000) / 2;
      } else if (now - statsAt > 600) statsLevel = null;
    }).finally(() => { statsBusy = false; });
  };
  // Live captions: each entry's author and how much text it had, to tell which entries grow.
  const captionText = new WeakMap();
  const captionAuthors = () => {
    const authors = [];
    for (const wrap of document.querySelectorAll('[data-tid="closed-caption-renderer-wrapper"]')) {
      for (const author of wrap.querySelectorAll('[data-tid="author"]')) {
        let entry = author.parentElement;
        while (entry && entry !== wrap && !entry.querySelector('[data-tid="closed-caption-text"]')) entry = entry.parentElement;
        const textEl = entry ? entry.querySelector('[data-tid="closed-caption-text"]') : null;
        if (!textEl) continue;
        const text = textEl.textContent || "";
        const name = (author.textContent || "").trim();
        if (name && captionText.get(textEl) !== text) authors.push(name);
        captionText.set(textEl, text);
      }
    }
    return Array.from(new Set(authors));
  };
  const sample = () => {
    const live = receivers.filter((r) => r.receiver.track && r.receiver.track.readyState !== "ended");
    const main = live.filter((r) => /mainAudio/i.test(r.ids));
    const active = new Set();
    let level = null;
    const heard = {};
    const now = Date.now();
    let levelAt = now;
    // The spec's timestamp is a DOMHighResTimeStamp; Chromium gives epoch ms, others may count
    // from timeOrigin. Either way it becomes epoch ms; null when it is neither.
    const epoch = (ts) => Math.abs(ts - now) < 60000 ? ts : Math.abs(performance.timeOrigin + ts - now) < 60000 ? performance.timeOrigin + ts : null;
    for (const r of main.length > 0 ? main : live) {
      let ss = [];
      let cs = [];
      try {
        cs = r.receiver.getContributingSources();
        if (!csrcHeard) ss = r.receiver.getSynchronizationSources();
      } catch {}
      for (const s of ss) if (typeof s.audioLevel === "number") level = Math.max(level === null ? 0 : level, s.audioLevel);
      if (!csrcHeard) sourcesLevelKnown ||= ss.some((s) => typeof s.audioLevel === "number");
      for (const c of cs) {
        const prev = lastTs.get(c.source);
        lastTs.set(c.source, c.timestamp);
        const at = epoch(c.timestamp);
        // Moved since the last sample, or played within the last 150 ms (a source's first
        // sample; a page whose sources are stamped when they are read).
        if ((prev !== undefined && c.timestamp > prev) || (at !== null && now - at <= 150)) {
          active.add(c.source);
          heard[c.source] = at === null ? now : Math.min(now, at);
        }
      }
    }
    // Once the mix carries CSRCs the tiles' markers and the level are not used (fusion.ts): skip
    // the style reads.
    if (active.size > 0) csrcHeard = true;
    const talking = [];
    let captions = [];
    if (lastTs.size === 0) {
      for (const tile of tiles()) if (speaking(tile)) talking.push(tileName(tile));
      captions = captionAuthors();
      if (!sourcesLevelKnown) {
        readStats(main.length > 0 ? main : live);
        level = statsLevel;
        if (level !== null) levelAt = Math.round(statsAt);
      }
    }
    push(samples, { t: now, csrc: Array.from(active), heard, level, levelAt, tiles: talking, captions });
  };
  let sampler = setInterval(sample, 100);
  const callObject = () => {
    let call = null;
    try {
      call = (window.callingDebug && window.callingDebug.observableCall) || null;
      if (!call && window.msteamscalling && typeof window.msteamscalling.deref === "function") {
        const calling = window.msteamscalling.deref();
        call = calling && calling.callingService && calling.callingService.getActiveCall ? calling.callingService.getActiveCall() : null;
      }
    } catch { call = null; }
    if (!call) return null;
    const known = Array.from(lastTs.keys());
    let list = [];
    try { list = Array.from(call.participants || []); } catch {}
    return {
      callerMri: typeof call.callerMri === "string" ? call.callerMri : null,
      participants: list.map((p) => {
        const sources = [];
        for (const s of known) { try { if (typeof p.hasAudioSource === "function" && p.hasAudioSource(s)) sources.push(s); } catch {} }
        return { id: String(p.id ?? p.mri ?? ""), displayName: typeof p.displayName === "string" ? p.displayName : null, role: p.meetingRole ?? null, sources };
      }),
    };
  };
  const visible = (e) => e.getClientRects().length > 0;
  const people = () => {
    const panes = Array.from(document.querySelectorAll('[aria-label="People"], [aria-label="Attendees"][role="tree"]')).filter(visible);
    if (panes.length === 0) return null;
    const rows = [];
    for (const pane of panes) {
      for (const row of pane.querySelectorAll('[data-cid="roster-participant"][aria-label], [data-tid^="participantsInCall-"]')) {
        const label = row.getAttribute("aria-label") || (row.textContent || "").trim();
        if (label && !rows.includes(label)) rows.push(label);
      }
    }
    return rows;
  };
  window.${OBSERVER_GLOBAL} = {
    drain() {
      const view = JSON.stringify({ call: callObject(), people: people(), tiles: tiles().map(tileName) });
      drains += 1;
      const fresh = view !== lastView || drains % VIEW_EVERY === 0;
      lastView = view;
      return '{"samples":' + JSON.stringify(samples.splice(0)) + ',"dsh":' + JSON.stringify(dsh.splice(0)) + ',"now":' + Date.now() + (fresh ? ',"view":' + view : "") + "}";
    },
    emailShaped: (s) => EMAIL.test(s),
    // The bench's within-bot A/B (worker/observe/duty-cycle.ts): the sampler stopped and started.
    pause() { clearInterval(sampler); sampler = null; },
    resume() { if (sampler === null) sampler = setInterval(sample, 100); },
  };
})();`;

export interface PageSample {
  t: number;
  csrc: number[];
  /** Epoch ms of each active source's latest played frame. */
  heard?: Record<string, number>;
  level: number | null;
  /** When the audio `level` measures was played (epoch ms): the receivers' measure lags the sample. */
  levelAt?: number;
  tiles: PageTile[];
  /** Authors of caption entries whose text changed since the last sample (absent before 2026-11-28). */
  captions?: string[];
}
export interface PageTile {
  name: string | null;
  tid: string | null;
  aria: string | null;
}
export interface PageCallObject {
  callerMri: string | null;
  participants: { id: string; displayName: string | null; role: unknown; sources: number[] }[];
}
/** What the page shows of who is there; absent from a drain when unchanged since the last one. */
export interface PageView {
  call: PageCallObject | null;
  people: string[] | null;
  tiles: PageTile[];
}
/** `drain()` answers this as a JSON string. */
export interface PageDrain {
  samples: PageSample[];
  dsh: { t: number; history: number[] }[];
  now: number;
  view?: PageView;
}
