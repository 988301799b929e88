/**
 * G.711 (ITU-T G.711: µ-law, PCMU, and A-law, PCMA) to linear samples, for the encoded path's
 * receivers on a plain RTP server's codec (encoded-receiver.ts). 8 kHz, one byte a sample.
 */

const MU_LAW = new Float32Array(256);
const A_LAW = new Float32Array(256);
for (let i = 0; i < 256; i++) {
  const mu = ~i & 0xff;
  const muMagnitude = ((((mu & 0x0f) << 3) + 0x84) << ((mu & 0x70) >> 4)) - 0x84;
  MU_LAW[i] = (mu & 0x80 ? -muMagnitude : muMagnitude) / 32768;
  const a = i ^ 0x55;
  const segment = (a & 0x70) >> 4;
  let aMagnitude = (a & 0x0f) << 4;
  aMagnitude = segment === 0 ? aMagnitude + 8 : ((aMagnitude + 0x108) << (segment - 1));
  A_LAW[i] = (a & 0x80 ? aMagnitude : -aMagnitude) / 32768;
}

export const G711_RATE = 8000;

/** The payload's samples in [-1, 1). */
export function decodeG711(payload: Uint8Array, law: "mu" | "a"): Float32Array {
  const table = law === "mu" ? MU_LAW : A_LAW;
  const out = new Float32Array(payload.length);
  for (let i = 0; i < payload.length; i++) out[i] = table[payload[i]!]!;
  return out;
}
