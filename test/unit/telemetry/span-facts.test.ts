import { describe, expect, it } from "vitest";
import { allAttributes, factsOf, type FinishedSpan, RecordedSpan, UnsampledSpan, withFacts } from "../../../src/telemetry/recorded-span.js";
import { factKey, factsAsAttributes, type FactWriter, type SpanFacts } from "../../../src/telemetry/span-facts.js";

// A span's facts (docs/observability.md#how-spans-leave): typed fields written key by known key;
// the encoders' agreement with the SDK's serializers is in otlp-encoding.test.ts.

const ROUTE = factKey("http.route");
const STATUS = factKey("http.response.status_code");
const IDS = factKey("workspace_adapter.query.ids");

class RouteFacts implements SpanFacts {
  status: number | undefined = undefined;
  readonly ids: string[] = [];

  write(out: FactWriter): void {
    out.fact(ROUTE, "/v1/chat/completions");
    out.fact(STATUS, this.status);
    out.fact(IDS, this.ids);
  }
}

const CONTEXT = { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags: 1 };
const CLOCK = { epochMs: 1_764_000_000_000, at: 0 };

describe("a span's facts", () => {
  it("encode each key once, as the KeyValue's key and the tag of its value", () => {
    // field 1 (key), length 10, "http.route", then field 2's tag (value)
    expect(Buffer.from(ROUTE.prefix).toString("hex")).toBe(`0a0a${Buffer.from("http.route").toString("hex")}12`);
  });

  it("read as attributes in their order, unset ones left out, lists copied as they were when read", () => {
    const facts = new RouteFacts();
    expect(factsAsAttributes(facts)).toEqual({ "http.route": "/v1/chat/completions", "workspace_adapter.query.ids": [] });
    facts.status = 200;
    facts.ids.push("q1");
    const read = factsAsAttributes(facts);
    facts.ids.push("q2");
    expect(Object.keys(read)).toEqual(["http.route", "http.response.status_code", "workspace_adapter.query.ids"]);
    expect(read["workspace_adapter.query.ids"]).toEqual(["q1"]);
  });

  it("are kept by a span that records, set until it ends, and come before its other attributes", () => {
    const ended: FinishedSpan[] = [];
    const span = new RecordedSpan({ ended: (finished) => ended.push(finished) }, "GET", 1, CONTEXT, undefined, CLOCK, { "url.scheme": "http" }, undefined);
    const facts = withFacts(span, new RouteFacts());
    expect(factsOf(span, RouteFacts)).toBe(facts);
    facts.status = 204;
    span.end();
    expect(Object.keys(allAttributes(ended[0] as FinishedSpan))).toEqual(["http.route", "http.response.status_code", "workspace_adapter.query.ids", "url.scheme"]);
  });

  it("are not kept by a span the sampler dropped, nor by one that ended", () => {
    const dropped = new UnsampledSpan({ ...CONTEXT, traceFlags: 0 });
    withFacts(dropped, new RouteFacts());
    expect(factsOf(dropped, RouteFacts)).toBeUndefined();
    const span = new RecordedSpan({ ended: () => undefined }, "GET", 1, CONTEXT, undefined, CLOCK, {}, undefined);
    span.end();
    withFacts(span, new RouteFacts());
    expect(factsOf(span, RouteFacts)).toBeUndefined();
  });
});
