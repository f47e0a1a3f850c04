import pino, { type Logger } from "pino";

const S = pino.symbols;
/** Two symbols pino exports but its typings leave out. */
const UNTYPED = pino.symbols as unknown as Record<"msgPrefixSym" | "mixinMergeStrategySym", symbol | undefined>;

/** The pino internals a line is built from, read once per logger (pino exports these symbols for plugins and transports). */
interface LineParts {
  stream: { write(line: string): unknown };
  levelPrefix: string;
  time: () => string;
  chindings: string;
  mixin: ((merge: object, level: number, logger: Logger) => object) | undefined;
  end: string;
  messageKey: string;
}

/** A logger's view through pino's exported symbols (they are not in its typings). */
type Internals = Record<symbol, unknown>;

/**
 * The one info line per request (request-log.ts), written as pino writes it, for less: the fields
 * are serialized by one `JSON.stringify` into a flat string, where pino's general path escapes
 * each key and value and joins some forty pieces that its destination then flattens again (about
 * a tenth of the chat completion's log-and-close work; docs/benchmarks.md#cpu-per-request-side-by-side).
 * The line is byte for byte pino's own for such fields (`test/unit/http/request-log-line.test.ts`):
 * its level and time, the logger's bindings, the mixin's fields (the trace ids, with tracing on),
 * the fields, the message. A logger this cannot copy exactly (formatters, hooks, serializers other
 * than pino's own for errors, redaction, a nested key or message prefix, a stream that wants
 * pino's metadata: a multistream) gets `logger.info` itself.
 */
export function requestLineWriter(logger: Logger): (fields: Record<string, unknown>, message: string) => void {
  const parts = linePartsOf(logger);
  if (!parts) return (fields, message) => logger.info(fields, message);
  const { stream, levelPrefix, time, chindings, mixin, end, messageKey } = parts;
  const level = pino.levels.values.info as number;
  return (fields, message) => {
    if (!logger.isLevelEnabled("info")) return;
    // pino merges the fields into the mixin's object; an empty one (a request closes outside its own async context: its trace ids come with its fields) adds nothing.
    const added = mixin?.(fields, level, logger);
    const merged = added !== undefined && Object.keys(added).length > 0 ? Object.assign(added, fields) : fields;
    const json = JSON.stringify(merged);
    const body = json.length > 2 ? `,${json.slice(1, -1)}` : "";
    stream.write(`${levelPrefix}${time()}${chindings}${body},"${messageKey}":${JSON.stringify(message)}${end}`);
  };
}

/** What a line is built from, or undefined when this logger's lines are not the plain shape (see `requestLineWriter`). */
function linePartsOf(logger: Logger): LineParts | undefined {
  const internals = logger as unknown as Internals;
  const stream = internals[S.streamSym] as (LineParts["stream"] & Internals) | undefined;
  const formatters = internals[S.formattersSym] as { log?: unknown; level?: unknown } | undefined;
  const hooks = internals[S.hooksSym] as { logMethod?: unknown; streamWrite?: unknown } | undefined;
  const serializers = (internals[S.serializersSym] ?? {}) as Record<string, unknown>;
  const stringifiers = (internals[S.stringifiersSym] ?? {}) as Record<string | symbol, unknown>;
  const levelPrefix = (internals[S.lsCacheSym] as Record<number, string> | undefined)?.[pino.levels.values.info as number];
  const time = internals[S.timeSym];
  const chindings = internals[S.chindingsSym];
  const end = internals[S.endSym];
  const messageKey = internals[S.messageKeySym];
  const mixin = internals[S.mixinSym];
  const plain =
    typeof stream?.write === "function" &&
    stream[S.needsMetadataGsym] !== true &&
    formatters?.log === undefined &&
    hooks?.logMethod === undefined &&
    hooks?.streamWrite === undefined &&
    !internals[S.nestedKeySym] &&
    UNTYPED.msgPrefixSym !== undefined &&
    internals[UNTYPED.msgPrefixSym] === undefined &&
    UNTYPED.mixinMergeStrategySym !== undefined &&
    internals[UNTYPED.mixinMergeStrategySym] === undefined &&
    stringifiers[S.wildcardFirstSym] === undefined &&
    Object.keys(stringifiers).length === 0 &&
    Object.keys(serializers).every((key) => key === internals[S.errorKeySym]) &&
    typeof levelPrefix === "string" &&
    typeof time === "function" &&
    typeof chindings === "string" &&
    typeof end === "string" &&
    typeof messageKey === "string" &&
    (mixin === undefined || typeof mixin === "function");
  if (!plain) return undefined;
  return {
    stream,
    levelPrefix,
    time: () => (time as () => string).call(logger),
    chindings,
    mixin: mixin as LineParts["mixin"],
    end,
    messageKey,
  };
}
