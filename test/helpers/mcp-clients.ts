import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client";
import { Client as Client20250618 } from "mcp-sdk-2025-06-18/client/index.js";
import { StreamableHTTPClientTransport as Transport20250618 } from "mcp-sdk-2025-06-18/client/streamableHttp.js";
import { Client as ClientV1 } from "mcp-sdk-v1/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "mcp-sdk-v1/client/streamableHttp.js";

/** The MCP protocol revisions the adapter serves, each spoken by the official SDK line its clients use. */
export const REVISIONS = ["2025-06-18", "2025-11-25", "2026-07-28"] as const;
/** One revision. */
export type Revision = (typeof REVISIONS)[number];

/** A progress notification as the clients report it. */
export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/** What a test does with a connected client, whichever SDK line it is. */
export interface McpTestClient {
  revision: Revision;
  /** The revision the client negotiated (what it sends as `MCP-Protocol-Version`). */
  negotiated: string | undefined;
  listTools(): Promise<{ name: string; inputSchema: unknown; outputSchema?: unknown; annotations?: Record<string, unknown>; description?: string }[]>;
  callTool(
    name: string,
    args: Record<string, unknown>,
    options?: { onprogress?: (progress: Progress) => void; signal?: AbortSignal; timeout?: number },
  ): Promise<any>;
  close(): Promise<void>;
  /** Every HTTP exchange the transport made: method, request headers, status, response content type. */
  exchanges: { method: string; headers: Headers; status: number; contentType: string | null; body: string | undefined }[];
}

/**
 * Connects the official SDK client of a revision over Streamable HTTP: `@modelcontextprotocol/sdk`
 * 1.22 (the line whose latest revision is 2025-06-18), 1.32 (2025-11-25), and
 * `@modelcontextprotocol/client` 2.x pinned to 2026-07-28 (no `initialize`, no session).
 */
export async function connectMcp(revision: Revision, url: string, headers: Record<string, string>): Promise<McpTestClient> {
  const exchanges: McpTestClient["exchanges"] = [];
  const recordingFetch = async (input: string | URL | Request, init?: RequestInit) => {
    const response = await fetch(input, init);
    const body = typeof init?.body === "string" ? init.body : undefined;
    exchanges.push({ method: init?.method ?? "GET", headers: new Headers(init?.headers), status: response.status, contentType: response.headers.get("content-type"), body });
    return response;
  };
  const info = { name: `adapter-test-${revision}`, version: "1.0.0" };
  const requestInit = { headers };
  if (revision === "2026-07-28") {
    const client = new ClientV2(info, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await client.connect(new TransportV2(new URL(url), { requestInit, fetch: recordingFetch }));
    return {
      revision,
      negotiated: client.getNegotiatedProtocolVersion(),
      exchanges,
      listTools: async () => (await client.listTools()).tools as any,
      callTool: (name, args, options = {}) =>
        client.callTool({ name, arguments: args }, { ...options, resetTimeoutOnProgress: true }),
      close: () => client.close(),
    };
  }
  // Two releases of one SDK line: the same API, typed apart.
  const client = revision === "2025-06-18" ? new Client20250618(info) : (new ClientV1(info) as unknown as Client20250618);
  const Transport = revision === "2025-06-18" ? Transport20250618 : (TransportV1 as unknown as typeof Transport20250618);
  const transport = new Transport(new URL(url), { requestInit, fetch: recordingFetch as any });
  await client.connect(transport);
  return {
    revision,
    negotiated: transport.protocolVersion,
    exchanges,
    listTools: async () => (await client.listTools()).tools as any,
    callTool: (name, args, options = {}) => client.callTool({ name, arguments: args }, undefined, { ...options, resetTimeoutOnProgress: true }),
    close: () => client.close(),
  };
}
