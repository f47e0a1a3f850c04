import type { IncomingMessage, ServerResponse } from "node:http";
import { endWithBytes } from "../error-response.js";

/** The request headers the SDK reads: content negotiation and MCP's own (`MCP-Protocol-Version`, `Mcp-Method`, …). */
const FOR_THE_SDK = /^(?:accept|content-type|mcp-[a-z0-9-]+|last-event-id)$/;

/**
 * A `node:http` request as the web `Request` the MCP SDK serves (its body already read by the
 * edge and handed over parsed). Only the headers the SDK reads go along: the credential stays at
 * the edge, and fewer headers cost less. `signal` aborts the exchange: the SDK then ends its response.
 */
export function toWebRequest(request: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || !FOR_THE_SDK.test(name)) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  // Only the path matters to the SDK; the host is not trusted for anything.
  return new Request(new URL(request.url ?? "/", "http://adapter.invalid"), { method: request.method ?? "POST", headers, signal });
}

/**
 * Writes a web `Response` to a `node:http` response: status, headers, then the body as it comes
 * (an SSE stream chunk by chunk, with `write()` backpressure). A client that leaves cancels the body.
 */
export async function writeWebResponse(
  web: Response,
  response: ServerResponse,
  extraHeaders: Record<string, string> = {},
): Promise<void> {
  // Gone, or answered already (a tool call whose key the workspace refused: docs/mcp-oauth.md).
  if (response.destroyed || response.headersSent) {
    await web.body?.cancel().catch(() => undefined);
    return;
  }
  response.statusCode = web.status;
  web.headers.forEach((value, name) => {
    response.setHeader(name, value);
  });
  for (const [name, value] of Object.entries(extraHeaders)) response.setHeader(name, value);
  if (!web.body) {
    response.end();
    return;
  }
  if (!(web.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    // A JSON body is whole already: one write with its length, as every other route answers.
    // Its bytes as the SDK encoded them: read as text, they would be decoded and encoded again.
    endWithBytes(response, Buffer.from(await web.arrayBuffer()));
    return;
  }
  response.setHeader("x-accel-buffering", "no");
  response.flushHeaders();
  response.socket?.setNoDelay(true);
  const reader = web.body.getReader();
  const stop = () => void reader.cancel().catch(() => undefined);
  response.once("close", stop);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || response.destroyed) break;
      if (!response.write(value)) await drained(response);
    }
  } catch {
    // The SDK ended the stream because the exchange was aborted (the client left): nothing to send.
  } finally {
    response.off("close", stop);
    if (!response.destroyed) response.end();
  }
}

/** Resolves when the response can take more, or is gone. */
function drained(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off("drain", done).off("close", done);
      resolve();
    };
    response.on("drain", done).on("close", done);
  });
}
