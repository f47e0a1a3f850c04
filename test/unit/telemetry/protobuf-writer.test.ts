import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ProtobufWriter } from "../../../src/telemetry/protobuf-writer.js";

// The writer copies short ASCII strings and hex ids itself rather than through Buffer's encoders;
// whatever the string, the bytes are Buffer's (a length-delimited field: the length, then the bytes).

/** What Buffer's encoder makes of `value`, as a length-delimited field. */
function delimited(bytes: Buffer): string {
  const length = new ProtobufWriter(16);
  length.varint(bytes.length);
  return Buffer.concat([length.written(), bytes]).toString("hex");
}

/** What the writer wrote for `write`, after a byte already there (the field never starts a buffer). */
function written(write: (writer: ProtobufWriter) => void): string {
  const writer = new ProtobufWriter(4);
  writer.varint(7);
  write(writer);
  return writer.written().subarray(1).toString("hex");
}

const hexDigits = "0123456789abcdefABCDEF".split("");
const hexLike = fc.array(fc.oneof({ weight: 20, arbitrary: fc.constantFrom(...hexDigits) }, { weight: 1, arbitrary: fc.constantFrom("g", "-", " ", "é", "0x") }), { maxLength: 300 });

describe("ProtobufWriter", () => {
  it("writes any string as Buffer's UTF-8 encoder does (short ASCII ones copied, others encoded: non-ASCII, lone surrogates, long)", () => {
    const strings = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.string({ unit: "binary", maxLength: 200 }),
      // Mostly ASCII, with Latin-1 and the odd character beyond: where a short string stops being ASCII.
      fc.string({ unit: fc.integer({ min: 0, max: 0x17f }).map((code) => String.fromCharCode(code)), maxLength: 130 }),
      fc.string({ unit: "grapheme-ascii", minLength: 120, maxLength: 140 }),
    );
    fc.assert(
      fc.property(strings, (value) => {
        expect(written((writer) => writer.string(value))).toBe(delimited(Buffer.from(value, "utf8")));
      }),
      { numRuns: 2000 },
    );
  });

  it("writes any hex id as Buffer's hex decoder does (trace and span ids, uppercase, odd lengths, a stray character)", () => {
    fc.assert(
      fc.property(hexLike, (characters) => {
        const value = characters.join("");
        expect(written((writer) => writer.hex(value))).toBe(delimited(Buffer.from(value, "hex")));
      }),
      { numRuns: 2000 },
    );
    expect(written((writer) => writer.hex("0af7651916cd43dd8448eb211c80319c"))).toBe(`10${"0af7651916cd43dd8448eb211c80319c"}`);
  });

  it("writes fixed-width numbers little-endian", () => {
    expect(written((writer) => writer.fixed32(0x01020304))).toBe("04030201");
    expect(written((writer) => writer.fixed32(0xffffffff))).toBe("ffffffff");
    // 1700000000 s and 5 ns since the epoch, as one fixed64 of nanoseconds.
    const nanos = 1_700_000_000n * 1_000_000_000n + 5n;
    const expected = Buffer.alloc(8);
    expected.writeBigUInt64LE(nanos);
    expect(written((writer) => writer.nanos(1_700_000_000, 5))).toBe(expected.toString("hex"));
  });
});
