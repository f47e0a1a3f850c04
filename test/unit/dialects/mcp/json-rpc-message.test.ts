import { describe, expect, it } from "vitest";
import { readJsonRpc } from "../../../../src/dialects/mcp/json-rpc-message.js";

const call = (params: unknown, id: unknown = 7) => ({ jsonrpc: "2.0", id, method: "tools/call", params });

describe("readJsonRpc, the one reader of an MCP POST body", () => {
  it("reads a tools/call: its id, the tool it names, its progress token and _meta, every key kept", () => {
    const body = call({ name: "ask", arguments: { question: "q" }, _meta: { progressToken: "p-1" }, task: { ttl: 1 } }, "id-1");
    const message = readJsonRpc(body);
    expect(message).toMatchObject({ kind: "tool-call", id: "id-1", name: "ask", progressToken: "p-1", meta: { progressToken: "p-1" } });
    expect(message.kind === "tool-call" && message.request.params).toEqual(body.params);
    expect(readJsonRpc(call({ name: "nope" }, 3))).toMatchObject({ kind: "tool-call", id: 3, name: "nope", progressToken: undefined, meta: undefined });
    // Admission counts it whatever else is wrong with it (the SDK then answers that).
    expect(readJsonRpc({ id: 4, method: "tools/call", params: { name: "ask" } })).toMatchObject({ kind: "tool-call", id: 4 });
    // A token of another type is no progress token (the SDK says what is wrong with it).
    expect(readJsonRpc(call({ name: "ask", _meta: { progressToken: {} } }))).toMatchObject({ kind: "tool-call", progressToken: undefined });
  });

  it("leaves to the SDK a tools/call it cannot be sure of: no id, a null id, no tool name, params not an object", () => {
    for (const body of [
      { jsonrpc: "2.0", method: "tools/call", params: { name: "ask" } },
      call({ name: "ask" }, null),
      call({ arguments: {} }),
      call(["ask"]),
      call({ name: "ask", _meta: [] }),
    ]) {
      expect(readJsonRpc(body)).toEqual({ kind: "other", method: "tools/call", meta: undefined });
    }
  });

  it("reads a notifications/cancelled without an id as a cancellation, one with an id as something else", () => {
    const cancelled = { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 7, reason: "user" } };
    expect(readJsonRpc(cancelled)).toEqual({ kind: "cancellation", requestId: 7, meta: undefined });
    expect(readJsonRpc({ ...cancelled, id: 1 }).kind).toBe("other");
    expect(readJsonRpc({ ...cancelled, params: { requestId: null } }).kind).toBe("other");
  });

  it("tells an initialize, and gives any other message's method and _meta (a 2026-07-28 request's envelope)", () => {
    expect(readJsonRpc({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} })).toEqual({ kind: "initialize", meta: undefined });
    const meta = { "io.modelcontextprotocol/clientCapabilities": { extensions: {} } };
    expect(readJsonRpc({ jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta: meta } })).toEqual({ kind: "other", method: "tools/list", meta });
    expect(readJsonRpc({ jsonrpc: "2.0", id: 2, method: "resources/read" })).toEqual({ kind: "other", method: "resources/read", meta: undefined });
  });

  it("reads a batch, a bare value or a message without a method as nothing it knows", () => {
    for (const body of [[call({ name: "ask" })], "tools/call", 3, null, { jsonrpc: "2.0", id: 1, result: {} }]) {
      expect(readJsonRpc(body)).toEqual({ kind: "other", method: undefined, meta: undefined });
    }
  });
});
