/**
 * Cuts a PCM byte stream into frames of exactly FRAME_MS (the listener's contract: every binary
 * frame is 20 ms). A remainder waits for the next chunk; nothing is padded or dropped.
 */
export class PcmFramer {
  readonly #frameBytes: number;
  #carry: Buffer = Buffer.alloc(0);

  constructor(frameBytes: number) {
    this.#frameBytes = frameBytes;
  }

  push(chunk: Buffer): Buffer[] {
    const buf = this.#carry.length > 0 ? Buffer.concat([this.#carry, chunk]) : chunk;
    const frames: Buffer[] = [];
    let offset = 0;
    while (buf.length - offset >= this.#frameBytes) {
      // A copy: the frame outlives the chunk, and a view would pin the whole chunk in memory.
      frames.push(Buffer.from(buf.subarray(offset, offset + this.#frameBytes)));
      offset += this.#frameBytes;
    }
    this.#carry = Buffer.from(buf.subarray(offset));
    return frames;
  }
}
