/**
 * A page that plays a tone as Teams plays the meeting: an oscillator sent over an RTCPeerConnection
 * loopback and played by an <audio> from its `srcObject` (`window.el`). `window.ready` resolves
 * once the call is set up. For the page tap's tests and `make bench-listen-parts`.
 */
export function webrtcTonePage(hz = 440): string {
  return `<body><script>
  window.ready = (async () => {
    const ctx = new AudioContext({ sampleRate: 48000 });
    const dest = ctx.createMediaStreamDestination();
    const osc = ctx.createOscillator();
    osc.frequency.value = ${Number(hz)};
    osc.connect(dest);
    osc.start();
    const pc1 = new RTCPeerConnection(), pc2 = new RTCPeerConnection();
    // Candidates wait for their peer's remote description (one added before it is lost).
    const held = new Map([[pc1, []], [pc2, []]]);
    const relay = (from, to) => (from.onicecandidate = (e) => {
      if (e.candidate) to.remoteDescription ? to.addIceCandidate(e.candidate).catch(() => {}) : held.get(to).push(e.candidate);
    });
    const release = (pc) => Promise.all(held.get(pc).splice(0).map((c) => pc.addIceCandidate(c).catch(() => {})));
    relay(pc1, pc2);
    relay(pc2, pc1);
    const audio = document.createElement("audio");
    audio.autoplay = true;
    document.body.appendChild(audio);
    window.el = audio;
    pc2.ontrack = (e) => { audio.srcObject = e.streams[0]; };
    for (const t of dest.stream.getTracks()) pc1.addTrack(t, dest.stream);
    const o = await pc1.createOffer(); await pc1.setLocalDescription(o); await pc2.setRemoteDescription(o); await release(pc2);
    const a = await pc2.createAnswer(); await pc2.setLocalDescription(a); await pc1.setRemoteDescription(a); await release(pc1);
    await ctx.resume();
  })();
</script></body>`;
}
