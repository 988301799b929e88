import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A page for media tests, served over http://127.0.0.1 (a secure context: navigator.mediaDevices
 * does not exist on about:blank or data: URLs). It exposes:
 *   startTone(freq, gain)  -> plays a WebAudio OscillatorNode to the default output
 *   stopTone()
 *   micLevel(ms)          -> {rms, peakHz} of the raw microphone (no EC/NS/AGC) over ms
 *   listDevices()         -> enumerateDevices() as plain objects
 *   tryMic()              -> "ok" or the getUserMedia error name
 */
const PAGE = `<!doctype html><meta charset="utf-8"><title>media test</title><script>
let ctx, osc;
window.startTone = async (freq, gain) => {
  ctx = new AudioContext({ sampleRate: 48000 });
  osc = ctx.createOscillator();
  osc.frequency.value = freq;
  const g = ctx.createGain();
  g.gain.value = gain;
  osc.connect(g).connect(ctx.destination);
  osc.start();
  await ctx.resume();
  return ctx.state;
};
window.stopTone = async () => { osc?.stop(); await ctx?.close(); };
window.listDevices = async () =>
  (await navigator.mediaDevices.enumerateDevices()).map((d) => ({ kind: d.kind, label: d.label, deviceId: d.deviceId }));
window.tryMic = () => navigator.mediaDevices.getUserMedia({ audio: true }).then(
  (s) => { s.getTracks().forEach((t) => t.stop()); return "ok"; },
  (e) => e.name);
window.micLevel = async (ms) => {
  const stream = await navigator.mediaDevices.getUserMedia({
    audio: { echoCancellation: false, noiseSuppression: false, autoGainControl: false },
  });
  const mctx = new AudioContext({ sampleRate: 48000 });
  const analyser = mctx.createAnalyser();
  analyser.fftSize = 8192;
  mctx.createMediaStreamSource(stream).connect(analyser);
  const time = new Float32Array(analyser.fftSize);
  const freq = new Float32Array(analyser.frequencyBinCount);
  let best = { rms: 0, peakHz: 0 };
  const end = performance.now() + ms;
  while (performance.now() < end) {
    await new Promise((r) => setTimeout(r, 100));
    analyser.getFloatTimeDomainData(time);
    const rms = Math.sqrt(time.reduce((s, v) => s + v * v, 0) / time.length);
    if (rms > best.rms) {
      analyser.getFloatFrequencyData(freq);
      let bin = 0;
      for (let i = 1; i < freq.length; i++) if (freq[i] > freq[bin]) bin = i;
      best = { rms, peakHz: (bin * mctx.sampleRate) / analyser.fftSize };
    }
  }
  stream.getTracks().forEach((t) => t.stop());
  await mctx.close();
  return best;
};
</script><body>media test</body>`;

export interface TonePageServer {
  url: string;
  close(): Promise<void>;
}

export async function startTonePage(): Promise<TonePageServer> {
  const server: Server = createServer((_req, res) => {
    res.setHeader("content-type", "text/html; charset=utf-8");
    res.end(PAGE);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
