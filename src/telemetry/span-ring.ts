/**
 * The ring's control block: byte counters (they only grow, modulo 2^32), span counters, the
 * wake-up sequence the worker waits on, and the spans of the export under way.
 */
const HEAD = 0;
const TAIL = 1;
const WRITTEN = 2;
const READ = 3;
const WAKE = 4;
const IN_FLIGHT = 5;
const CONTROL_BYTES = 32;
/** A record's length that means: the rest of the ring is unused, go on at its start. */
const WRAP = 0xffffffff;

/** The shared memory of a ring, and its capacity in spans: what the export worker is started with. */
export interface SpanRingMemory {
  buffer: SharedArrayBuffer;
  maxSpans: number;
}

/** Ring bytes per span of `OTEL_BSP_MAX_QUEUE_SIZE` (spans are a few hundred bytes; captured prompts more), within bounds. */
export function ringMemory(maxSpans: number): SpanRingMemory {
  const bytes = Math.min(64, Math.max(1, 2 ** Math.ceil(Math.log2((maxSpans * 2048) / 2 ** 20)))) * 2 ** 20;
  return { buffer: new SharedArrayBuffer(CONTROL_BYTES + bytes), maxSpans };
}

/**
 * A ring of encoded spans in shared memory, written by the event loop and read by the export
 * worker (one writer, one reader; docs/observability.md#how-spans-leave): a span costs the event
 * loop a copy of its bytes and a few atomic operations — no allocation, no message, no system call
 * but an occasional wake-up of the worker. Records are a 32-bit length, the bytes, padding to 4.
 * The ring holds at most `maxSpans` spans and its size in bytes; beyond that, `push` refuses.
 */
export class SpanRing {
  private readonly control: Int32Array;
  private readonly bytes: Buffer;
  private readonly mask: number;

  constructor(readonly memory: SpanRingMemory) {
    this.control = new Int32Array(memory.buffer, 0, CONTROL_BYTES / 4);
    this.bytes = Buffer.from(memory.buffer, CONTROL_BYTES);
    this.mask = this.bytes.length - 1;
  }

  /** Spans written and not yet read. */
  get waiting(): number {
    return (Atomics.load(this.control, WRITTEN) - Atomics.load(this.control, READ)) | 0;
  }

  /** Spans of the export under way (lost if the worker stops). */
  get inFlight(): number {
    return Atomics.load(this.control, IN_FLIGHT);
  }

  set inFlight(spans: number) {
    Atomics.store(this.control, IN_FLIGHT, spans);
  }

  /** The wake-up sequence: the worker waits for it to change. */
  get wake(): number {
    return Atomics.load(this.control, WAKE);
  }

  /** Copies one encoded span in (the writer's side); false when the ring is full. */
  push(source: Buffer, length: number): boolean {
    if (this.waiting >= this.memory.maxSpans) return false;
    const size = this.bytes.length;
    const need = 4 + ((length + 3) & ~3);
    let head = Atomics.load(this.control, HEAD) >>> 0;
    const used = (head - (Atomics.load(this.control, TAIL) >>> 0)) >>> 0;
    let at = head & this.mask;
    const skip = size - at < need ? size - at : 0;
    if (used + skip + need > size) return false;
    if (skip > 0) {
      this.bytes.writeUInt32LE(WRAP, at);
      head = (head + skip) >>> 0;
      at = 0;
    }
    this.bytes.writeUInt32LE(length, at);
    source.copy(this.bytes, at + 4, 0, length);
    Atomics.store(this.control, HEAD, (head + need) | 0);
    Atomics.add(this.control, WRITTEN, 1);
    return true;
  }

  /** Wakes the worker (it waits on `wake`): only when it has something new to do. */
  notify(): void {
    Atomics.add(this.control, WAKE, 1);
    Atomics.notify(this.control, WAKE);
  }

  /**
   * Hands up to `maxSpans` waiting spans to `use` (the reader's side), as views of the ring, then
   * frees their room: `use` must have copied them when it returns. Returns how many were read.
   */
  read(maxSpans: number, use: (spans: Uint8Array[]) => void): number {
    const head = Atomics.load(this.control, HEAD) >>> 0;
    let tail = Atomics.load(this.control, TAIL) >>> 0;
    const views: Uint8Array[] = [];
    while (tail !== head && views.length < maxSpans) {
      const at = tail & this.mask;
      const length = this.bytes.readUInt32LE(at);
      if (length === WRAP) {
        tail = (tail + this.bytes.length - at) >>> 0;
        continue;
      }
      views.push(this.bytes.subarray(at + 4, at + 4 + length));
      tail = (tail + 4 + ((length + 3) & ~3)) >>> 0;
    }
    if (views.length > 0) use(views);
    Atomics.store(this.control, TAIL, tail | 0);
    Atomics.add(this.control, READ, views.length);
    return views.length;
  }

  /** Waits (the reader's side) until `wake` is no longer `seen` (`ok`, `not-equal`), or `timeoutMs` passed (`timed-out`). */
  async waitFor(seen: number, timeoutMs: number): Promise<"ok" | "not-equal" | "timed-out"> {
    const waited = Atomics.waitAsync(this.control, WAKE, seen, timeoutMs);
    return waited.async ? await waited.value : waited.value;
  }
}
