import { ProtobufWriter, WIRE } from "./protobuf-writer.js";

/** Keys remembered at most, and values per key (a key seen with more values, ids, is then written each time). */
const MAX_KEYS = 256;
const MAX_VALUES = 32;
/** Strings longer than this are not remembered. */
const MAX_STRING = 64;

/** One attribute key as encoded: its KeyValue's bytes up to the value, and whole KeyValues for values seen again. */
export interface CachedKey {
  /** `key` (field 1) and the tag of `value` (field 2). */
  readonly prefix: Uint8Array;
  /** KeyValue messages by value, each after its length (what follows the field's tag); none once the key had too many values to remember. */
  values: Map<string | number | boolean, Uint8Array> | undefined;
}

/**
 * The protobuf encoding of the attributes the adapter writes again and again — the same keys on
 * every span, mostly with the same values (the operation, the model, the route, the status) —
 * remembered by the writer that encodes spans on the event loop, so that such a KeyValue costs a
 * copy. Bounded: 256 keys, 32 short values each; a key with more values (an id) keeps only its
 * prefix. Owned by one encoder: attributes are encoded as they would be without it.
 */
export class AttributeCache {
  private readonly keys = new Map<string, CachedKey>();

  /** The cached encoding of `key`, made on first asking while there is room. */
  key(key: string): CachedKey | undefined {
    let cached = this.keys.get(key);
    if (cached === undefined && this.keys.size < MAX_KEYS) {
      const writer = new ProtobufWriter(key.length * 3 + 8);
      writer.tag(1, WIRE.bytes);
      writer.string(key);
      writer.tag(2, WIRE.bytes);
      cached = { prefix: Uint8Array.from(writer.written()), values: new Map() };
      this.keys.set(key, cached);
    }
    return cached;
  }

  /** Whether a value is worth remembering: short strings, booleans, small integers. */
  static remembers(value: unknown): value is string | number | boolean {
    switch (typeof value) {
      case "string":
        return value.length <= MAX_STRING;
      case "boolean":
        return true;
      case "number":
        return Number.isInteger(value) && Math.abs(value) < 2 ** 31;
      default:
        return false;
    }
  }

  /** Remembers `key`'s KeyValue for `value` (its length, then its bytes), or stops remembering the key's values when there are too many. */
  static remember(cached: CachedKey, value: string | number | boolean, keyValue: Uint8Array): void {
    if (!cached.values) return;
    if (cached.values.size >= MAX_VALUES) cached.values = undefined;
    else cached.values.set(value, Uint8Array.from(keyValue));
  }
}
