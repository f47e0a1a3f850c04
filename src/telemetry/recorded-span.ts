import type { Attributes, AttributeValue, Exception, Link, Span, SpanContext, SpanStatus, TimeInput, TraceState } from "@opentelemetry/api";
import { factsAsAttributes, type SpanFacts } from "./span-facts.js";

/**
 * The clock of the spans of one local trace: the wall-clock time (ms since the epoch, whole) at
 * which `performance.now()` read `at`. A root span reads the wall clock once; its children take
 * its clock, so their times nest exactly, however the wall clock is adjusted meanwhile.
 */
export interface TraceClock {
  readonly epochMs: number;
  readonly at: number;
}

/** An event on a span: its time on the span's clock (a `performance.now()` reading). */
export interface SpanEvent {
  readonly name: string;
  readonly time: number;
  readonly attributes: Attributes | undefined;
}

/** What a span's parent is, as the span records it. */
export interface SpanParent {
  readonly spanId: string;
  /** Received from elsewhere (a `traceparent`), not a span of this process. */
  readonly isRemote: boolean;
}

/** A span once ended, as the OTLP encoders read it (`otlp-span-protobuf.ts`, `otlp-span-json.ts`). */
export interface FinishedSpan {
  readonly name: string;
  /** SpanKind's number. */
  readonly kind: number;
  readonly context: SpanContext;
  readonly parent: SpanParent | undefined;
  readonly clock: TraceClock;
  readonly startTime: number;
  readonly endTime: number;
  /** Its attributes besides its facts. */
  readonly attributes: Attributes;
  /** The attributes it keeps in typed fields (the adapter's hot spans), written before `attributes`. */
  readonly facts: SpanFacts | undefined;
  readonly events: readonly SpanEvent[];
  readonly links: readonly Link[];
  readonly statusCode: number;
  readonly statusMessage: string | undefined;
}

/** Where a recorded span goes once it ends: the hand-off to the export worker (`span-handoff.ts`). */
export interface SpanSink {
  ended(span: FinishedSpan): void;
}

const NONE: readonly never[] = Object.freeze([]);
const STATUS_UNSET = 0;
const STATUS_OK = 1;
const STATUS_ERROR = 2;

/**
 * A sampled span of this adapter, recorded as cheaply as the API allows: its attributes are its
 * facts, when it has them (typed fields the caller keeps, `span-facts.ts`), and the object it was
 * started with (built once by the caller, never copied or checked on the event loop); events and
 * links are appended as given, and times are `performance.now()` readings on its trace's clock.
 * Everything else — limits, encoding, batching, export — happens once it ends, and mostly on the
 * export worker. Calls on an ended span do nothing (the SDK only warns).
 */
export class RecordedSpan implements Span, FinishedSpan {
  private eventList: SpanEvent[] | undefined = undefined;
  private linkList: Link[] | undefined;
  statusCode = STATUS_UNSET;
  statusMessage: string | undefined = undefined;
  /** Its facts, when its caller keeps them (`withFacts`). */
  facts: SpanFacts | undefined = undefined;
  /** Its end on the trace's clock; -1 while it runs. */
  endTime = -1;
  readonly startTime = performance.now();

  constructor(
    private readonly sink: SpanSink,
    public name: string,
    readonly kind: number,
    readonly context: SpanContext,
    readonly parent: SpanParent | undefined,
    readonly clock: TraceClock,
    readonly attributes: Attributes,
    links: Link[] | undefined,
  ) {
    this.linkList = links;
  }

  get events(): readonly SpanEvent[] {
    return this.eventList ?? NONE;
  }

  get links(): readonly Link[] {
    return this.linkList ?? NONE;
  }

  spanContext(): SpanContext {
    return this.context;
  }

  setAttribute(key: string, value: AttributeValue | undefined): this {
    if (this.endTime < 0) this.attributes[key] = value;
    return this;
  }

  setAttributes(attributes: Attributes): this {
    if (this.endTime < 0) Object.assign(this.attributes, attributes);
    return this;
  }

  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    if (this.endTime >= 0) return this;
    const timed = isTimeInput(attributesOrTime);
    const at = timed ? attributesOrTime : time;
    const event: SpanEvent = {
      name,
      time: at === undefined ? performance.now() : this.onClock(at),
      attributes: timed ? undefined : attributesOrTime,
    };
    if (this.eventList) this.eventList.push(event);
    else this.eventList = [event];
    return this;
  }

  addLink(link: Link): this {
    if (this.endTime >= 0) return this;
    if (this.linkList) this.linkList.push(link);
    else this.linkList = [link];
    return this;
  }

  addLinks(links: Link[]): this {
    for (const link of links) this.addLink(link);
    return this;
  }

  setStatus(status: SpanStatus): this {
    // As the SDK: UNSET changes nothing, OK is final, only an error keeps a message.
    if (this.endTime >= 0 || status.code === STATUS_UNSET || this.statusCode === STATUS_OK) return this;
    this.statusCode = status.code;
    this.statusMessage = status.code === STATUS_ERROR && typeof status.message === "string" ? status.message : undefined;
    return this;
  }

  updateName(name: string): this {
    if (this.endTime < 0) this.name = name;
    return this;
  }

  end(endTime?: TimeInput): void {
    if (this.endTime >= 0) return;
    // A start after the end (a clock set back) gives a span of no length, as the SDK does.
    this.endTime = Math.max(this.startTime, endTime === undefined ? performance.now() : this.onClock(endTime));
    this.sink.ended(this);
  }

  isRecording(): boolean {
    return this.endTime < 0;
  }

  recordException(exception: Exception, time?: TimeInput): void {
    const attributes: Attributes = {};
    if (typeof exception === "string") attributes["exception.message"] = exception;
    else {
      const type = exception.code !== undefined ? String(exception.code) : exception.name;
      if (type) attributes["exception.type"] = type;
      if (exception.message) attributes["exception.message"] = exception.message;
      if (exception.stack) attributes["exception.stacktrace"] = exception.stack;
    }
    this.addEvent("exception", attributes, time);
  }

  /** A time the API accepts (a `performance.now()` reading, ms since the epoch, a Date, an HrTime) on this span's clock. */
  private onClock(time: TimeInput): number {
    if (typeof time === "number") return time <= performance.now() ? time : time - this.clock.epochMs + this.clock.at;
    const epochMs = time instanceof Date ? time.getTime() : time[0] * 1000 + time[1] / 1e6;
    return epochMs - this.clock.epochMs + this.clock.at;
  }
}

/**
 * A span the sampler dropped: it records nothing and is never exported, but carries its context
 * (the trace id, and the decision in its flags) to the calls made within it, as the SDK's
 * non-recording span does.
 */
export class UnsampledSpan implements Span {
  constructor(private readonly context: SpanContext) {}

  spanContext(): SpanContext {
    return this.context;
  }

  setAttribute(): this {
    return this;
  }

  setAttributes(): this {
    return this;
  }

  addEvent(): this {
    return this;
  }

  addLink(): this {
    return this;
  }

  addLinks(): this {
    return this;
  }

  setStatus(): this {
    return this;
  }

  updateName(): this {
    return this;
  }

  end(): void {}

  isRecording(): boolean {
    return false;
  }

  recordException(): void {}
}

/**
 * A new trace clock: now, on the wall clock and on the performance clock. The wall clock is read
 * between two readings of the performance clock, and `at` is their middle: a thread descheduled
 * between two plain reads (a busy machine) would shift every time of the trace by that long. A
 * reading whose two ends lie 50 µs or more apart is taken again, twice at most, and the narrowest kept.
 */
export function clockNow(): TraceClock {
  let clock: TraceClock | undefined;
  let width = Number.POSITIVE_INFINITY;
  for (let tries = 0; tries < 3 && width >= 0.05; tries += 1) {
    const before = performance.now();
    const epochMs = Date.now();
    const after = performance.now();
    if (after - before < width) {
      width = after - before;
      clock = { epochMs, at: (before + after) / 2 };
    }
  }
  return clock as TraceClock;
}

/** The time `time` (on `clock`) as seconds and nanoseconds since the epoch, without losing the nanoseconds to a float. */
export function epochTime(clock: TraceClock, time: number): [seconds: number, nanos: number] {
  const delta = time - clock.at;
  const wholeMs = Math.floor(delta);
  const totalMs = clock.epochMs + wholeMs;
  let seconds = Math.floor(totalMs / 1000);
  let nanos = (totalMs - seconds * 1000) * 1e6 + Math.round((delta - wholeMs) * 1e6);
  if (nanos >= 1e9) {
    seconds += 1;
    nanos -= 1e9;
  }
  return [seconds, nanos];
}

/** All of a finished span's attributes, its facts first, as one object (for the JSON encoder and the SDK's exporters). */
export function allAttributes(span: FinishedSpan): Attributes {
  return span.facts ? Object.assign(factsAsAttributes(span.facts), span.attributes) : span.attributes;
}

/**
 * Gives a span its facts and returns them: the caller builds them once the span records
 * (`span.isRecording()`), keeps them and sets their fields until the span ends. A span that does
 * not record keeps nothing.
 */
export function withFacts<F extends SpanFacts>(span: Span, facts: F): F {
  if (span instanceof RecordedSpan && span.isRecording()) span.facts = facts;
  return facts;
}

/** The facts of `span` when it is a recorded span whose facts are a `type` (none for a span the sampler dropped). */
export function factsOf<F extends SpanFacts>(span: Span, type: abstract new (...args: never[]) => F): F | undefined {
  return span instanceof RecordedSpan && span.facts instanceof type ? span.facts : undefined;
}

function isTimeInput(value: Attributes | TimeInput | undefined): value is TimeInput {
  return typeof value === "number" || value instanceof Date || Array.isArray(value);
}

/** The trace state of a span, serialized as its `tracestate` (none when empty). */
export function serializedState(state: TraceState | undefined): string | undefined {
  const serialized = state?.serialize();
  return serialized ? serialized : undefined;
}
