import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { ClientClosedError, QueryFailedError, RateLimitError } from "../../../src/errors/adapter-error.js";
import { reportFailure } from "../../../src/http/error-response.js";
import { RequestContext } from "../../../src/http/request-context.js";
import { KeepAliveSweeps, SseWriter } from "../../../src/http/sse-writer.js";
import { waitFor } from "../../helpers/wait-for.js";

// The one error path of every route (docs/architecture/edge.md#errors): an error before the headers
// is its status and body; after a stream's headers, the dialect's error frames; otherwise the
// connection is cut; a client that left gets nothing.

/** A response that records what is written to it, in order. */
class RecordingResponse extends EventEmitter {
  statusCode = 200;
  headersSent = false;
  destroyed = false;
  writableFinished = false;
  headers = new Map<string, unknown>();
  written: string[] = [];
  setHeader(name: string, value: unknown) {
    this.headers.set(name.toLowerCase(), value);
  }
  hasHeader(name: string) {
    return this.headers.has(name.toLowerCase());
  }
  flushHeaders() {
    this.headersSent = true;
  }
  cork() {}
  uncork() {}
  write(text: string) {
    this.headersSent = true;
    this.written.push(text);
    return true;
  }
  end(text?: string | Buffer) {
    this.headersSent = true;
    if (text !== undefined) this.written.push(String(text));
    this.writableFinished = true;
  }
  destroy() {
    this.destroyed = true;
  }
}

const logger = pino({ level: "silent" });
const served = () => {
  const response = new RecordingResponse();
  const context = new RequestContext("r-1", undefined, { audited: false });
  return { response, context, target: { response: response as unknown as ServerResponse, context } };
};

describe("reportFailure", () => {
  it("answers an error before anything was sent with its status, headers and error body", () => {
    const { response, target } = served();
    reportFailure(new RateLimitError("Too many requests", { headers: { "retry-after": "1" } }), target, logger);
    expect(response.statusCode).toBe(429);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(JSON.parse(response.written[0] ?? "")).toMatchObject({ error: { type: "rate_limit_error" } });
  });

  it("ends a stream whose headers went with its dialect's error frames, then [DONE], never a second head", async () => {
    const { response, context, target } = served();
    const writer = new SseWriter(target, new KeepAliveSweeps().of(60_000), (error) => [{ data: { error: { message: error.message } } }, { data: "[DONE]" }]);
    writer.open();
    reportFailure(new QueryFailedError("the query failed"), target, logger);
    expect(context.stream).toBe(writer);
    await waitFor(() => response.writableFinished, "the stream to end");
    expect(response.written).toEqual(['data: {"error":{"message":"the query failed"}}\n\n', "data: [DONE]\n\n"]);
    expect(response.statusCode).toBe(200);
    expect(response.destroyed).toBe(false);
  });

  it("cuts a response that began and is no stream, and says nothing to a client that left", () => {
    const begun = served();
    begun.response.write("{");
    reportFailure(new QueryFailedError("the query failed"), begun.target, logger);
    expect(begun.response.destroyed).toBe(true);
    const gone = served();
    gone.response.destroyed = true;
    reportFailure(new ClientClosedError(), gone.target, logger);
    expect(gone.response.written).toEqual([]);
  });
});
