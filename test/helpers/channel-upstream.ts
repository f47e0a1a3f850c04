import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One query of the channel upstream, as the test steers it. */
export interface ScriptedQuery {
  id: string;
  content: string;
  status: "PENDING" | "PROCESSING" | "PROCESSED" | "FAILED";
  /** What the list shows as the output (a streamed answer's text may be absent from it until the end). */
  output: string;
  steps: unknown[];
}

/**
 * An interface-conformant upstream whose queries the test moves by hand, and whose create answers
 * carry whatever realtime fields the test gives (docs/architecture/upstream.md#queries). Its list shows no
 * partial output unless the test puts some there: the case the realtime channel exists for.
 */
export class ChannelUpstream {
  readonly queries = new Map<string, ScriptedQuery>();
  /** List calls made so far. */
  listCalls = 0;
  private readonly server: Server;

  private constructor(private readonly channelFor: (id: string) => Record<string, unknown>) {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        response.setHeader("content-type", "application/json");
        if (!request.headers.authorization?.startsWith("Bearer ")) {
          response.writeHead(401).end(JSON.stringify({ detail: "Not authenticated" }));
          return;
        }
        if (request.method === "POST" && request.url === "/queries") {
          const body = JSON.parse(Buffer.concat(chunks).toString()) as { id: string; content: string };
          const query: ScriptedQuery = { id: body.id, content: body.content, status: "PENDING", output: "", steps: [] };
          this.queries.set(body.id, query);
          response.end(JSON.stringify({ ...query, ...this.channelFor(body.id) }));
          return;
        }
        if (request.method === "GET" && request.url?.startsWith("/queries")) {
          this.listCalls += 1;
          const data = [...this.queries.values()].reverse().map(({ id, content, status, output, steps }) => ({ id, content, status, output, steps }));
          response.end(JSON.stringify({ data, next_cursor: null, has_more: false }));
          return;
        }
        response.end(JSON.stringify({ status: "ok" }));
      });
    });
  }

  /** Starts one on a free loopback port; `channelFor` gives each created query its realtime fields. */
  static async start(channelFor: (id: string) => Record<string, unknown>): Promise<ChannelUpstream> {
    const upstream = new ChannelUpstream(channelFor);
    await new Promise<void>((resolve) => upstream.server.listen(0, "127.0.0.1", resolve));
    return upstream;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The query created most recently. */
  get last(): ScriptedQuery | undefined {
    return [...this.queries.values()].at(-1);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
