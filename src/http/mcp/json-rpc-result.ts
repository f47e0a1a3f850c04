import { SERVER_INFO_META_KEY } from "@modelcontextprotocol/server";

/** Who the server says it is, stamped on every 2026-07-28 result (`_meta`). */
export interface ServerIdentity {
  name: string;
  title: string;
  version: string;
}

/** The per-request revision (the `_meta` envelope), whose results carry a `resultType` and the server's identity. */
const MODERN_REVISION = "2026-07-28";

/**
 * The JSON-RPC response to a task request (docs/mcp.md#long-answers-as-tasks), which the edge
 * answers itself (task-replies.ts), outside the per-request SDK server: the result, stamped on 2026-07-28 as
 * that revision's codec stamps results (`resultType: "complete"`, then the server's identity under
 * `_meta`; a result that already carries either keeps its own).
 */
export function jsonRpcResult(id: string | number, revision: string, result: unknown, server: ServerIdentity): string {
  const encoded = revision === MODERN_REVISION && isPlainObject(result) ? stampModern(result, server) : result;
  return JSON.stringify({ result: encoded, jsonrpc: "2.0", id });
}

function stampModern(result: Record<string, unknown>, server: ServerIdentity): Record<string, unknown> {
  const stamped = result.resultType === undefined ? { ...result, resultType: "complete" } : result;
  const meta = stamped._meta;
  if (meta === undefined) return { ...stamped, _meta: { [SERVER_INFO_META_KEY]: server } };
  if (!isPlainObject(meta) || meta[SERVER_INFO_META_KEY] !== undefined) return stamped;
  return { ...stamped, _meta: { ...meta, [SERVER_INFO_META_KEY]: server } };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
