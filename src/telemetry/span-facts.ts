import type { AttributeValue, Span } from "@opentelemetry/api";

/** A fact's value: what the adapter's typed spans record (a list of strings at most; no nested values). */
export type FactValue = string | number | boolean | readonly string[];

/** Where a span's facts are written, key by key; an undefined value is not written, as an undefined attribute is not. */
export interface FactWriter {
  fact(key: string, value: FactValue | undefined): void;
}

/**
 * What one of the adapter's own spans knows (a request's server span, its answer's span, an
 * upstream call's span; docs/observability.md#what-a-trace-holds), kept in typed fields of an
 * object made for that span while the work goes on and written onto the span, in the order the
 * span lists them, when it ends. A span the sampler drops gets no facts object at all.
 */
export interface SpanFacts {
  /** Writes every fact set, in the order the span lists them. */
  write(out: FactWriter): void;
}

/** Facts written onto a span, key by key (the SDK checks and copies each value). */
class SpanOut implements FactWriter {
  constructor(private readonly span: Span) {}

  fact(key: string, value: FactValue | undefined): void {
    if (value !== undefined) this.span.setAttribute(key, value as AttributeValue);
  }
}

/** Ends `span` (at `endTime`, a `performance.now()` reading, or now) with its facts written onto it, when it has them. */
export function endWithFacts(span: Span, facts: SpanFacts | undefined, endTime?: number): void {
  if (facts) facts.write(new SpanOut(span));
  span.end(endTime);
}
