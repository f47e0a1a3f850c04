import { describe, expect, it } from "vitest";
import { readJsonRpc } from "../../../../src/dialects/mcp/json-rpc-message.js";
import { directToolCall as directToolCallOf, EnvelopeMemo } from "../../../../src/http/mcp/direct-tool-call.js";

// Which 2026-07-28 calls the endpoint answers itself, with the envelopes it already judged remembered
// (the byte-for-byte comparison with the SDK is test/features/mcp/direct-tool-call.test.ts).

const headers = { accept: "application/json, text/event-stream", "content-type": "application/json", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "ask" };
const envelope = (clientInfo: unknown) => ({
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": clientInfo,
  "io.modelcontextprotocol/clientCapabilities": {},
});
/** `directToolCall` on a body as the edge reads it (`readJsonRpc`). */
const directToolCall = (requestHeaders: typeof headers, body: unknown, memo: EnvelopeMemo) => directToolCallOf(requestHeaders, readJsonRpc(body), body, memo);
const call = (meta: unknown, id: unknown = 1) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "ask", arguments: { question: "How much leave?" }, _meta: meta } });

describe("directToolCall on 2026-07-28", () => {
  it("remembers a valid envelope, and still judges every other one (and the rest of each request) afresh", () => {
    const memo = new EnvelopeMemo();
    const valid = envelope({ name: "client", version: "1" });
    expect(directToolCall(headers, call(valid), memo)).toMatchObject({ id: 1, revision: "2026-07-28" });
    expect(memo.has(JSON.stringify(valid))).toBe(true);
    // Remembered: the next call of that client is recognised; its other parts are still checked.
    expect(directToolCall(headers, call(valid, 2), memo)).toMatchObject({ id: 2 });
    expect(directToolCall(headers, call(valid, null), memo)).toBeUndefined();
    expect(directToolCall({ ...headers, "mcp-name": "reason" }, call(valid), memo)).toBeUndefined();
    // Another envelope, invalid: never recognised, never remembered.
    const invalid = envelope({ name: "client" });
    expect(directToolCall(headers, call(invalid), memo)).toBeUndefined();
    expect(directToolCall(headers, call(invalid), memo)).toBeUndefined();
    expect(memo.has(JSON.stringify(invalid))).toBe(false);
  });

  it("forgets what it remembered once full, and goes on judging", () => {
    const memo = new EnvelopeMemo();
    for (let index = 0; index < 300; index += 1) expect(directToolCall(headers, call(envelope({ name: `client ${index}`, version: "1" })), memo)).toBeDefined();
    expect(memo.has(JSON.stringify(envelope({ name: "client 0", version: "1" })))).toBe(false);
    expect(memo.has(JSON.stringify(envelope({ name: "client 299", version: "1" })))).toBe(true);
  });
});
