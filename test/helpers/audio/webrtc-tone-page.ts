import { readFileSync } from "node:fs";

/** The fixture's in-page loopback (connectPeers), inlined: these pages have no server to load it from. */
const LOOPBACK = readFileSync(new URL("../../fixture/teams/public/loopback.js", import.meta.url), "utf8");

/**
 * A page that plays a tone as Teams plays the meeting: an oscillator sent over an RTCPeerConnection
 * loopback and played by an <audio> from its `srcObject` (`window.el`). `window.ready` resolves
 * once the call is set up, which starts `callAfterMs` after the page loads. `receiverOffers`: the
 * receiving connection adds its transceiver and makes the offer (a client to its media server).
 * For the page tap's tests and `make bench-listen-parts`.
 */
export function webrtcTonePage(hz = 440, callAfterMs = 0, { receiverOffers = false } = {}): string {
  return `<body><script type="module">
${LOOPBACK}
  window.ready = (async () => {
    // A call starts a while after the page loads, as a meeting's does after the join.
    await new Promise((r) => setTimeout(r, ${Number(callAfterMs)}));
    const ctx = new AudioContext({ sampleRate: 48000 });
    const dest = ctx.createMediaStreamDestination();
    const osc = ctx.createOscillator();
    osc.frequency.value = ${Number(hz)};
    osc.connect(dest);
    osc.start();
    const pc1 = new RTCPeerConnection(), pc2 = new RTCPeerConnection();
    const audio = document.createElement("audio");
    audio.autoplay = true;
    document.body.appendChild(audio);
    window.el = audio;
    pc2.ontrack = (e) => { audio.srcObject = e.streams[0] ?? new MediaStream([e.track]); };
    for (const t of dest.stream.getTracks()) pc1.addTrack(t, dest.stream);
    if (${receiverOffers}) {
      // The receiving side makes the offer, as a meeting client does with its media server.
      pc2.addTransceiver("audio", { direction: "recvonly" });
      await connectPeers(pc2, pc1);
    } else {
      await connectPeers(pc1, pc2);
    }
    await ctx.resume();
  })();
</script></body>`;
}
