import { z } from "zod";

/** A JSON-RPC request id as MCP allows it (a string or a number; never null). */
const requestIdSchema = z.union([z.string(), z.number()]);
/** A request's `_meta`: its keys are read where they matter (`progressTokenOf`, `declaresAnswerCard`). */
const metaSchema = z.record(z.string(), z.unknown());

/**
 * The messages the MCP edge tells apart (docs/architecture.md#mcp-tools). Loose, as schemas of
 * what comes from outside are here: only what the edge decides on is checked, every other key
 * kept, and anything unsure left to the SDK, which answers each malformed message with its error.
 */
const toolCallSchema = z.looseObject({
  jsonrpc: z.unknown().optional(),
  id: requestIdSchema,
  method: z.literal("tools/call"),
  params: z.looseObject({ name: z.string(), arguments: z.unknown().optional(), _meta: metaSchema.optional() }),
});
const cancellationSchema = z.looseObject({
  // A notification has no id: a `notifications/cancelled` with one is not a cancellation.
  id: z.never().optional(),
  method: z.literal("notifications/cancelled"),
  params: z.looseObject({ requestId: requestIdSchema }),
});
const initializeSchema = z.looseObject({ method: z.literal("initialize") });
const messageSchema = z.discriminatedUnion("method", [toolCallSchema, cancellationSchema, initializeSchema]);
/** Any other single message, for the `_meta` it carries (a 2026-07-28 request's client capabilities). */
const otherSchema = z.looseObject({
  method: z.string(),
  params: z.looseObject({ _meta: metaSchema.optional().catch(undefined) }).optional().catch(undefined),
});

/** A `tools/call` request as it came (every key kept): what the direct path checks further. */
export type ToolCallRequest = z.output<typeof toolCallSchema>;

/** One POST's body as the MCP edge reads it: admission, cancellation, `initialize` and the direct path all decide on it. */
export type JsonRpcMessage =
  | {
      kind: "tool-call";
      id: string | number;
      /** The tool it names (known or not). */
      name: string;
      /** `_meta.progressToken`, when the call asked for progress. */
      progressToken: string | number | undefined;
      meta: Record<string, unknown> | undefined;
      request: ToolCallRequest;
    }
  | { kind: "cancellation"; requestId: string | number; meta: undefined }
  | { kind: "initialize"; meta: undefined }
  /** A batch, another method, or a message the schemas above do not fit (the SDK answers it). */
  | { kind: "other"; method: string | undefined; meta: Record<string, unknown> | undefined };

/**
 * Reads one MCP POST body (docs/architecture.md#mcp-tools): the one reader behind the edge's
 * decisions, so that none of them casts the body or reads it its own way.
 */
export function readJsonRpc(body: unknown): JsonRpcMessage {
  const known = messageSchema.safeParse(body);
  if (known.success) {
    const message = known.data;
    if (message.method === "tools/call") {
      const meta = message.params._meta;
      const { name } = message.params;
      return { kind: "tool-call", id: message.id, name, progressToken: progressTokenOf(meta), meta, request: message };
    }
    if (message.method === "notifications/cancelled") return { kind: "cancellation", requestId: message.params.requestId, meta: undefined };
    return { kind: "initialize", meta: undefined };
  }
  const other = otherSchema.safeParse(body);
  if (!other.success) return { kind: "other", method: undefined, meta: undefined };
  return { kind: "other", method: other.data.method, meta: other.data.params?._meta };
}

/** A request's progress token, when it carries a valid one. */
function progressTokenOf(meta: Record<string, unknown> | undefined): string | number | undefined {
  const token = meta?.progressToken;
  return typeof token === "string" || typeof token === "number" ? token : undefined;
}
