import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { RequestContext } from "../../../src/http/request-context.js";
import { KeepAliveSweeps, SseWriter } from "../../../src/http/sse-writer.js";
import { waitFor } from "../../helpers/wait-for.js";

const sweeps = new KeepAliveSweeps();
const failFrames = () => [{ data: "[DONE]" }];
/** A writer on `response`, whose request's context ends when the response closes. */
const writerOf = (response: FullResponse, keepAliveMs: number) => {
  const context = new RequestContext("request", undefined, { audited: false });
  response.once("close", () => context.close(false));
  return new SseWriter({ response: response as unknown as ServerResponse, context }, sweeps.of(keepAliveMs), failFrames);
};

/** A response whose socket is "full": write() returns false until drain is emitted. */
class FullResponse extends EventEmitter {
  written: string[] = [];
  destroyed = false;
  full = true;
  status() {
    return this;
  }
  setHeader() {}
  flushHeaders() {}
  cork() {}
  uncork() {}
  write(frame: string) {
    this.written.push(frame);
    return !this.full;
  }
  end() {}
}

describe("SseWriter", () => {
  it("waits for drain when the client stops reading, and resumes after it", async () => {
    const response = new FullResponse();
    const writer = writerOf(response, 10_000);
    writer.open();
    let sent = false;
    const sending = writer.send([{ data: { n: 1 } }]).then(() => {
      sent = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(sent).toBe(false);
    response.full = false;
    response.emit("drain");
    await sending;
    expect(sent).toBe(true);
    expect(response.written).toEqual(['data: {"n":1}\n\n']);
    await writer.end();
  });

  it("stops waiting and writing once the client is gone", async () => {
    const response = new FullResponse();
    const writer = writerOf(response, 10_000);
    writer.open();
    const sending = writer.send([{ data: { n: 1 } }]);
    response.destroyed = true;
    response.emit("close");
    await sending;
    await writer.send([{ data: { n: 2 } }]);
    expect(response.written).toHaveLength(1);
    expect(writer.isClosed).toBe(true);
  });

  it("writes a keep-alive comment after the idle interval only", async () => {
    const response = new FullResponse();
    response.full = false;
    const writer = writerOf(response, 30);
    writer.open();
    await waitFor(() => response.written.includes(": keep-alive\n\n"), "a keep-alive comment");
    await writer.end();
    const count = response.written.length;
    await new Promise((resolve) => setTimeout(resolve, 80)); // a quiet spell of several intervals: nothing more is written
    expect(response.written.length).toBe(count);
  });

  it("writes named events when the frame names one, and strings as they are", async () => {
    const response = new FullResponse();
    response.full = false;
    const writer = writerOf(response, 10_000);
    writer.open();
    await writer.send([{ event: "response.output_text.delta", data: { delta: "Hi" } }]);
    await writer.send([{ data: "[DONE]" }]);
    expect(response.written).toEqual(['event: response.output_text.delta\ndata: {"delta":"Hi"}\n\n', "data: [DONE]\n\n"]);
    await writer.end();
  });
});
