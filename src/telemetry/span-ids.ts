import { randomFillSync } from "node:crypto";

const POOL_BYTES = 4096;
const INVALID_TRACE_ID = "0".repeat(32);
const INVALID_SPAN_ID = "0".repeat(16);

/**
 * Trace and span ids (W3C trace context: 16 and 8 random bytes, in lowercase hex, never all
 * zeros), cut from a pool of random bytes refilled a page at a time: one system call for a few
 * hundred spans instead of one per id.
 */
export class SpanIds {
  private readonly pool = Buffer.allocUnsafeSlow(POOL_BYTES);
  private used = POOL_BYTES;

  traceId(): string {
    const id = this.next(16);
    return id === INVALID_TRACE_ID ? this.traceId() : id;
  }

  spanId(): string {
    const id = this.next(8);
    return id === INVALID_SPAN_ID ? this.spanId() : id;
  }

  private next(bytes: number): string {
    if (this.used + bytes > POOL_BYTES) {
      randomFillSync(this.pool);
      this.used = 0;
    }
    const id = this.pool.toString("hex", this.used, this.used + bytes);
    this.used += bytes;
    return id;
  }
}
