import pino, { type Logger, type LoggerOptions } from "pino";
import { describe, expect, it } from "vitest";
import { requestLineWriter } from "../../../src/http/request-log-line.js";

/** A pino logger writing into an array, with a fixed clock so that two lines can be compared byte for byte. */
function capturing(options: LoggerOptions = {}): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger = pino({ base: { service: "workspace-openai-adapter" }, timestamp: () => ',"time":1795745405149', ...options }, { write: (line: string) => lines.push(line) });
  return { logger, lines };
}

/** The line pino writes for `fields`, and the line the writer writes. */
function bothLines(make: () => { logger: Logger; lines: string[] }, fields: Record<string, unknown>): [string | undefined, string | undefined] {
  const viaPino = make();
  viaPino.logger.info(fields, "request");
  const viaWriter = make();
  requestLineWriter(viaWriter.logger)(fields, "request");
  return [viaPino.lines[0], viaWriter.lines[0]];
}

const plain = {
  requestId: "30cc89af-c4b9-4eb4-ad8a-155e25f01981",
  method: "POST",
  path: "/v1/chat/completions",
  status: 200,
  key: "key:sJYmYuk31Exp",
  queryIds: ["2f60a7fc-c194-4d37-b99c-1e6ad5cbf138", "b"],
  continued: false,
  tool: undefined,
  ms: 51.3,
};

describe("the request log line", () => {
  it("is byte for byte pino's line for the request's fields", () => {
    const [expected, actual] = bothLines(() => capturing(), plain);
    expect(expected).toMatch(/^\{"level":30,"time":1795745405149,"service":"workspace-openai-adapter","requestId":/);
    expect(actual).toBe(expected);
  });

  it("escapes as pino does: quotes, backslashes, control characters, long and non-ASCII strings, a non-finite number", () => {
    const fields = { ...plain, key: 'a "named" key\\ with\ta tab', path: `/v1/${"x".repeat(150)}`, tool: "ask — 質問", ms: Number.NaN };
    const [expected, actual] = bothLines(() => capturing(), fields);
    expect(actual).toBe(expected);
    expect(JSON.parse(actual ?? "")).toMatchObject({ key: 'a "named" key\\ with\ta tab', tool: "ask — 質問", ms: null });
  });

  it("carries the mixin's fields (the trace ids) where pino puts them, and a child's bindings", () => {
    const mixin = () => ({ trace_id: "0af7651916cd43dd8448eb211c80319c", span_id: "b7ad6b7169203331", trace_flags: "01" });
    expect(new Set(bothLines(() => capturing({ mixin }), plain)).size).toBe(1);
    const traced = { ...plain, trace_id: "1".repeat(32), span_id: "2".repeat(16), trace_flags: "01" };
    const [expected, actual] = bothLines(() => capturing({ mixin }), traced);
    expect(actual).toBe(expected);
    const child = () => {
      const { logger, lines } = capturing();
      return { logger: logger.child({ component: "edge" }), lines };
    };
    const [childExpected, childActual] = bothLines(child, plain);
    expect(childActual).toContain('"service":"workspace-openai-adapter","component":"edge","requestId"');
    expect(childActual).toBe(childExpected);
  });

  it("writes nothing below the logger's level, and follows a level changed later", () => {
    const { logger, lines } = capturing({ level: "warn" });
    const write = requestLineWriter(logger);
    write(plain, "request");
    expect(lines).toEqual([]);
    logger.level = "info";
    write(plain, "request");
    expect(lines).toHaveLength(1);
  });

  it("leaves a logger whose lines it cannot copy to pino itself: formatters, serializers, redaction, a multistream", () => {
    const formatted = () => capturing({ formatters: { log: (object) => ({ ...object, extra: true }) } });
    const [expected, actual] = bothLines(formatted, plain);
    expect(expected).toContain('"extra":true');
    expect(actual).toBe(expected);
    const serialized = () => capturing({ serializers: { key: () => "[hidden]" } });
    const [serializedExpected, serializedActual] = bothLines(serialized, plain);
    expect(serializedActual).toContain('"key":"[hidden]"');
    expect(serializedActual).toBe(serializedExpected);
    const [redactedExpected, redactedActual] = bothLines(() => capturing({ redact: ["key"] }), plain);
    expect(redactedActual).toContain('"key":"[Redacted]"');
    expect(redactedActual).toBe(redactedExpected);
    const lines: string[] = [];
    const multi = pino({ timestamp: false }, pino.multistream([{ stream: { write: (line: string) => lines.push(line) } }]));
    requestLineWriter(multi)(plain, "request");
    expect(JSON.parse(lines[0] ?? "")).toMatchObject({ level: 30, requestId: plain.requestId, msg: "request" });
  });
});
