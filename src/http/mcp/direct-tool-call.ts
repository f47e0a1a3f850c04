import type { IncomingHttpHeaders } from "node:http";
import { type ToolDefinition, toolNamed } from "../../dialects/mcp/tool-definitions.js";

/**
 * The 2025-era revisions whose plain `tools/call` the SDK's stateless transport answers with one
 * JSON body (test/features/mcp/direct-tool-call.test.ts checks each against the SDK).
 */
const DIRECT_REVISIONS: ReadonlySet<string> = new Set(["2025-03-26", "2025-06-18", "2025-11-25"]);

/** A `tools/call` the endpoint answers itself: its id, tool and valid arguments. */
export interface DirectToolCall {
  id: string | number;
  tool: ToolDefinition;
  arguments: unknown;
}

/**
 * Recognises the one request the MCP endpoint answers without the SDK (docs/architecture.md#mcp-tools):
 * a single 2025-era `tools/call` (its `MCP-Protocol-Version` one of DIRECT_REVISIONS, no 2026
 * `_meta` envelope), from a client that accepts JSON and SSE, with a JSON content type, no
 * progress token (so the answer is one JSON body, no stream), of a known tool whose arguments fit
 * its zod schema. Anything else, or anything unsure, is `undefined`: the SDK serves it (and says
 * what is wrong with invalid arguments, an unknown tool or a malformed message).
 */
export function directToolCall(headers: IncomingHttpHeaders, body: unknown): DirectToolCall | undefined {
  const revision = headers["mcp-protocol-version"];
  if (typeof revision !== "string" || !DIRECT_REVISIONS.has(revision)) return undefined;
  const accept = headers.accept;
  if (typeof accept !== "string" || !accept.includes("application/json") || !accept.includes("text/event-stream")) return undefined;
  if (!isJsonContentType(headers["content-type"])) return undefined;
  if (!isPlainObject(body) || body.jsonrpc !== "2.0" || body.method !== "tools/call") return undefined;
  const { id, params } = body;
  if (!((typeof id === "string" && id !== "") || (typeof id === "number" && Number.isInteger(id)))) return undefined;
  if (!onlyKeys(body, ["jsonrpc", "id", "method", "params"]) || !isPlainObject(params)) return undefined;
  if (!onlyKeys(params, ["name", "arguments", "_meta"]) || typeof params.name !== "string") return undefined;
  if (params._meta !== undefined && !(isPlainObject(params._meta) && Object.keys(params._meta).length === 0)) return undefined;
  if (params.arguments !== undefined && !isPlainObject(params.arguments)) return undefined;
  const tool = toolNamed(params.name);
  if (!tool) return undefined;
  const parsed = tool.input.safeParse(params.arguments ?? {});
  if (!parsed.success) return undefined;
  return { id, tool, arguments: parsed.data };
}

/**
 * The JSON-RPC response to a direct tool call, as the SDK's stateless transport writes it (the
 * same bytes: `result`, then `jsonrpc` and `id`). The result is the tool runner's: the answer
 * tools' `structuredContent` is an object under an object schema, which the 2025 wire codec
 * passes through unchanged.
 */
export function directToolCallResponse(id: string | number, result: unknown): string {
  return JSON.stringify({ result, jsonrpc: "2.0", id });
}

/** `application/json` exactly (other spellings the SDK may accept go to the SDK). */
function isJsonContentType(value: string | undefined): boolean {
  return value === "application/json";
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function onlyKeys(value: Record<string, unknown>, allowed: readonly string[]): boolean {
  return Object.keys(value).every((key) => allowed.includes(key));
}
