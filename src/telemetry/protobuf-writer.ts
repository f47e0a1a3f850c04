/** Protobuf wire types. */
export const WIRE = { varint: 0, fixed64: 1, bytes: 2, fixed32: 5 } as const;

/** Strings this short are written a character at a time when they are ASCII (cheaper than Buffer's encoder for them). */
const SHORT_STRING = 128;

/** The value of each hex digit's character code (lowercase and uppercase), 255 for any other character. */
const HEX_DIGITS: Uint8Array = (() => {
  const digits = new Uint8Array(128).fill(255);
  for (let value = 0; value < 16; value += 1) {
    digits[value.toString(16).charCodeAt(0)] = value;
    digits[value.toString(16).toUpperCase().charCodeAt(0)] = value;
  }
  return digits;
})();

/**
 * A protobuf writer into one growing buffer, for the OTLP messages the adapter sends (the wire
 * format: varints, fixed-width little-endian numbers, length-delimited bytes). A nested message
 * reserves one byte for its length and moves its bytes on in the rare case the length needs more.
 * Short ASCII strings and hex ids are copied a character at a time; any other string or id is written
 * by Buffer's native encoders straight into the buffer.
 */
export class ProtobufWriter {
  buffer: Buffer;
  pos = 0;

  constructor(capacity: number) {
    this.buffer = Buffer.allocUnsafeSlow(capacity);
  }

  /** Makes room for `bytes` more (doubling the buffer: a chunk of spans grows rarely). */
  ensure(bytes: number): void {
    const needed = this.pos + bytes;
    if (needed <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < needed) size *= 2;
    const grown = Buffer.allocUnsafeSlow(size);
    this.buffer.copy(grown, 0, 0, this.pos);
    this.buffer = grown;
  }

  tag(field: number, wireType: number): void {
    const key = (field << 3) | wireType;
    if (key > 127) {
      this.varint(key);
      return;
    }
    this.ensure(1);
    this.buffer[this.pos++] = key;
  }

  /** A non-negative integer up to 2^53, or a negative one as the ten bytes of its two's complement (int64). */
  varint(value: number): void {
    this.ensure(10);
    const buffer = this.buffer;
    if (value >= 0 && value <= 0xffffffff) {
      let rest = value >>> 0;
      while (rest > 127) {
        buffer[this.pos++] = (rest & 127) | 128;
        rest >>>= 7;
      }
      buffer[this.pos++] = rest;
      return;
    }
    let low = Math.abs(value) >>> 0;
    let high = (Math.abs(value) / 4294967296) >>> 0;
    if (value < 0) {
      low = ~low >>> 0;
      high = ~high >>> 0;
      low = (low + 1) >>> 0;
      if (low === 0) high = (high + 1) >>> 0;
    }
    while (high > 0 || low > 127) {
      buffer[this.pos++] = (low & 127) | 128;
      low = ((low >>> 7) | (high << 25)) >>> 0;
      high >>>= 7;
    }
    buffer[this.pos++] = low & 127;
  }

  fixed32(value: number): void {
    this.ensure(4);
    this.uint32(value >>> 0);
  }

  /** A time as a fixed64 of nanoseconds since the epoch, from whole seconds and nanoseconds (no float holds it exactly). */
  nanos(seconds: number, nanos: number): void {
    this.ensure(8);
    // seconds × 10^9 + nanos in two 32-bit halves, as the SDK's serializer computes it (writeHrTimeAsFixed64).
    const lowSeconds = (seconds & 0xffff) * 1e9;
    const highSeconds = ((seconds / 0x10000) >>> 0) * 1e9;
    const low = (lowSeconds >>> 0) + (((highSeconds & 0xffff) * 0x10000) >>> 0) + nanos;
    const high = Math.floor(lowSeconds / 4294967296) + ((highSeconds / 0x10000) >>> 0) + Math.floor(low / 4294967296);
    this.uint32(low >>> 0);
    this.uint32(high >>> 0);
  }

  double(value: number): void {
    this.ensure(8);
    this.buffer.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  /**
   * A length-delimited UTF-8 string: a short ASCII one (most keys and values) copied a character
   * at a time, any other written by Buffer's native encoder straight after a byte reserved for its
   * length (moved on in the rare case the length needs more).
   */
  string(value: string): void {
    const start = this.begin(value.length * 3);
    if (value.length >= SHORT_STRING || !this.ascii(value)) this.pos += this.buffer.write(value, this.pos, "utf8");
    this.end(start);
  }

  /**
   * A length-delimited field of the bytes a hex id stands for (trace and span ids), decoded here;
   * anything but an even run of hex digits is left to Buffer's decoder (which stops at the first
   * character that is not one).
   */
  hex(value: string): void {
    const bytes = value.length >>> 1;
    const start = this.begin(bytes);
    if (bytes >= SHORT_STRING || (value.length & 1) !== 0 || !this.hexDigits(value, bytes)) this.pos += this.buffer.write(value, this.pos, "hex");
    this.end(start);
  }

  /** Copies an ASCII string's characters as bytes, room made for them; false, the position unmoved, at the first other character. */
  private ascii(value: string): boolean {
    const { buffer, pos } = this;
    const length = value.length;
    for (let index = 0; index < length; index += 1) {
      const code = value.charCodeAt(index);
      if (code >= 0x80) return false;
      buffer[pos + index] = code;
    }
    this.pos = pos + length;
    return true;
  }

  /** Decodes `bytes` pairs of hex digits, room made for them; false, the position unmoved, at the first character that is not one. */
  private hexDigits(value: string, bytes: number): boolean {
    const { buffer, pos } = this;
    for (let index = 0; index < bytes; index += 1) {
      const high = HEX_DIGITS[value.charCodeAt(2 * index)] ?? 255;
      const low = HEX_DIGITS[value.charCodeAt(2 * index + 1)] ?? 255;
      if ((high | low) === 255) return false;
      buffer[pos + index] = (high << 4) | low;
    }
    this.pos = pos + bytes;
    return true;
  }

  /** Length-delimited raw bytes (an already encoded message). */
  bytes(value: Uint8Array): void {
    this.varint(value.length);
    this.ensure(value.length);
    this.buffer.set(value, this.pos);
    this.pos += value.length;
  }

  /** Bytes as they are (already encoded fields). */
  raw(value: Uint8Array): void {
    this.ensure(value.length);
    this.buffer.set(value, this.pos);
    this.pos += value.length;
  }

  /** Four little-endian bytes, room made for them. */
  private uint32(value: number): void {
    const buffer = this.buffer;
    const at = this.pos;
    buffer[at] = value & 0xff;
    buffer[at + 1] = (value >>> 8) & 0xff;
    buffer[at + 2] = (value >>> 16) & 0xff;
    buffer[at + 3] = value >>> 24;
    this.pos = at + 4;
  }

  /** Starts a length-delimited field of at most `room` more bytes' worth of writing: returns where its length goes. */
  begin(room = 0): number {
    this.ensure(room + 1);
    return this.pos++;
  }

  /**
   * Ends the length-delimited field begun at `start`: writes its length there, moving its bytes on
   * when the length takes more than a byte. Returns where its bytes start.
   */
  end(start: number): number {
    const length = this.pos - start - 1;
    if (length < 128) {
      this.buffer[start] = length;
      return start + 1;
    }
    let size = 2;
    while (length >= 2 ** (7 * size)) size += 1;
    this.ensure(size - 1);
    this.buffer.copyWithin(start + size, start + 1, this.pos);
    this.pos += size - 1;
    let at = start;
    let rest = length;
    while (rest > 127) {
      this.buffer[at++] = (rest & 127) | 128;
      rest >>>= 7;
    }
    this.buffer[at] = rest;
    return start + size;
  }

  /** What was written, as a view of the buffer. */
  written(): Buffer {
    return this.buffer.subarray(0, this.pos);
  }
}
