import type { IncomingHttpHeaders } from "node:http";
import { classifyInboundRequest, SERVER_INFO_META_KEY } from "@modelcontextprotocol/server";
import type { JsonRpcMessage } from "../../dialects/mcp/json-rpc-message.js";
import { type BoundToolCall, bindArguments, toolNamed } from "../../dialects/mcp/tool-definitions.js";

/**
 * The 2025-era revisions whose plain `tools/call` the SDK's stateless transport answers with one
 * JSON body (test/features/mcp/direct-tool-call.test.ts checks each against the SDK).
 */
const DIRECT_REVISIONS: ReadonlySet<string> = new Set(["2025-03-26", "2025-06-18", "2025-11-25"]);

/** The per-request revision (the `_meta` envelope) whose plain `tools/call` is answered directly too. */
const MODERN_REVISION = "2026-07-28";

/** The envelope keys a plain 2026-07-28 call carries, and nothing else (a progress token, a trace context: the SDK). */
const ENVELOPE_KEYS: readonly string[] = [
  "io.modelcontextprotocol/protocolVersion",
  "io.modelcontextprotocol/clientInfo",
  "io.modelcontextprotocol/clientCapabilities",
];

/** A `tools/call` the endpoint answers itself: its id, the tool bound to its valid arguments, and the revision it encodes for. */
export interface DirectToolCall {
  id: string | number;
  call: BoundToolCall;
  /** `2026-07-28` (the result is stamped as that revision's codec stamps it), or a 2025 one (the result as it is). */
  revision: string;
}

/** Who the server says it is, stamped on every 2026-07-28 result (`_meta`). */
export interface ServerIdentity {
  name: string;
  title: string;
  version: string;
}

/**
 * Recognises the one request the MCP endpoint answers without the SDK (docs/architecture.md#mcp-tools):
 * a single plain `tools/call` — on a 2025-era revision (its `MCP-Protocol-Version` one of
 * DIRECT_REVISIONS, no `_meta` but an empty one), or on 2026-07-28 with exactly the three envelope
 * keys, the envelope valid as the SDK's own classifier (`classifyInboundRequest`) judges it and
 * the `Mcp-Method`/`Mcp-Name` headers naming the body's method and tool — from a client that
 * accepts JSON and SSE, with a JSON content type, no progress token (so the answer is one JSON
 * body, no stream), of a known tool whose arguments fit its zod schema. Anything else, or anything
 * unsure, is `undefined`: the SDK serves it (and says what is wrong with a bad envelope, invalid
 * arguments, an unknown tool or a malformed message). `message` is the body as `readJsonRpc` read
 * it; the body itself goes only to the SDK's classifier.
 */
export function directToolCall(
  headers: IncomingHttpHeaders,
  message: JsonRpcMessage,
  body: unknown,
  envelopes: EnvelopeMemo = new EnvelopeMemo(),
): DirectToolCall | undefined {
  if (message.kind !== "tool-call") return undefined;
  const revision = headers["mcp-protocol-version"];
  if (typeof revision !== "string") return undefined;
  const modern = revision === MODERN_REVISION;
  if (!modern && !DIRECT_REVISIONS.has(revision)) return undefined;
  const accept = headers.accept;
  if (typeof accept !== "string" || !accept.includes("application/json") || !accept.includes("text/event-stream")) return undefined;
  if (!isJsonContentType(headers["content-type"])) return undefined;
  const { request, id, meta } = message;
  if (request.jsonrpc !== "2.0" || !((typeof id === "string" && id !== "") || (typeof id === "number" && Number.isInteger(id)))) return undefined;
  if (!onlyKeys(request, ["jsonrpc", "id", "method", "params"]) || !onlyKeys(request.params, ["name", "arguments", "_meta"])) return undefined;
  const plain = modern ? plainModernCall(headers, body, meta, message.name, envelopes) : isEmpty(meta);
  if (!plain) return undefined;
  const args = request.params.arguments;
  if (args !== undefined && !isPlainObject(args)) return undefined;
  const tool = toolNamed(message.name);
  if (!tool) return undefined;
  const bound = bindArguments(tool, args ?? {});
  if ("error" in bound) return undefined;
  return { id, call: bound.call, revision };
}

/**
 * Whether a 2026-07-28 `tools/call` is one the SDK's modern path would serve, with nothing of its
 * ladder left to say: exactly the envelope's three keys, which its classifier finds valid and in
 * agreement with the headers; `Mcp-Method` and `Mcp-Name` present and equal to the body's method
 * and tool (a Base64-encoded name, or any spacing, is left to the SDK).
 */
function plainModernCall(
  headers: IncomingHttpHeaders,
  body: unknown,
  meta: Record<string, unknown> | undefined,
  name: string,
  memo: EnvelopeMemo,
): boolean {
  if (meta === undefined || Object.keys(meta).length !== ENVELOPE_KEYS.length || !onlyKeys(meta, ENVELOPE_KEYS)) return false;
  if (headers["mcp-method"] !== "tools/call" || headers["mcp-name"] !== name) return false;
  const text = JSON.stringify(meta);
  if (memo.has(text)) return true;
  const route = classifyInboundRequest({
    httpMethod: "POST",
    protocolVersionHeader: MODERN_REVISION,
    mcpMethodHeader: "tools/call",
    mcpNameHeader: name,
    body,
  });
  const valid = route.kind === "modern" && route.messageKind === "request" && route.classification.revision === MODERN_REVISION;
  if (valid) memo.add(text);
  return valid;
}

/** Envelopes remembered at most (a client sends one envelope with every call; a deployment sees a few clients' worth). */
const ENVELOPES_REMEMBERED = 256;

/**
 * The 2026-07-28 envelopes the SDK's classifier already found valid, by their JSON text: a client
 * sends the same envelope with every call, so its zod check (about 30 µs, a tenth of a call's CPU)
 * runs once per client rather than once per call. The rest of each request is checked every time
 * (`directToolCall`). Bounded: forgotten all at once when full.
 */
export class EnvelopeMemo {
  private readonly valid = new Set<string>();

  has(text: string): boolean {
    return this.valid.has(text);
  }

  add(text: string): void {
    if (this.valid.size >= ENVELOPES_REMEMBERED) this.valid.clear();
    this.valid.add(text);
  }
}

/**
 * The JSON-RPC response to a direct tool call, as the SDK writes it (the same bytes: `result`,
 * then `jsonrpc` and `id`). The result is the tool runner's: the answer tools' `structuredContent`
 * is an object under an object schema, which both revisions' codecs pass through unchanged; on
 * 2026-07-28 the codec then stamps `resultType: "complete"` and the server's identity in `_meta`
 * (a result that already carries either keeps its own, as there).
 */
export function directToolCallResponse(call: Pick<DirectToolCall, "id" | "revision">, result: unknown, server: ServerIdentity): string {
  const encoded = call.revision === MODERN_REVISION && isPlainObject(result) ? stampModern(result, server) : result;
  return JSON.stringify({ result: encoded, jsonrpc: "2.0", id: call.id });
}

/** 2026-07-28's encode contract for a `tools/call` result: its `resultType`, then the server's identity. */
function stampModern(result: Record<string, unknown>, server: ServerIdentity): Record<string, unknown> {
  const stamped = result.resultType === undefined ? { ...result, resultType: "complete" } : result;
  const meta = stamped._meta;
  if (meta === undefined) return { ...stamped, _meta: { [SERVER_INFO_META_KEY]: server } };
  if (!isPlainObject(meta) || meta[SERVER_INFO_META_KEY] !== undefined) return stamped;
  return { ...stamped, _meta: { ...meta, [SERVER_INFO_META_KEY]: server } };
}

/** `application/json` exactly (other spellings the SDK may accept go to the SDK). */
function isJsonContentType(value: string | undefined): boolean {
  return value === "application/json";
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** No `_meta`, or an empty one: a plain 2025-era call. */
function isEmpty(meta: Record<string, unknown> | undefined): boolean {
  return meta === undefined || Object.keys(meta).length === 0;
}

function onlyKeys(value: Record<string, unknown>, allowed: readonly string[]): boolean {
  return Object.keys(value).every((key) => allowed.includes(key));
}
