import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, request } from "undici";

/** One request the proxy passed on. */
export interface ProxiedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

/** A running recording proxy. */
export interface RecordingProxy {
  url: string;
  requests: ProxiedRequest[];
  close(): Promise<void>;
}

/**
 * A loopback pass-through in front of an upstream that records what each request carried (the
 * tests read the `traceparent` the workspace service received). The upstream sees its own host,
 * so the realtime `ws_url` it writes still points at itself.
 */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const requests: ProxiedRequest[] = [];
  const dispatcher = new Agent({ connections: 16 });
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      requests.push({ method: incoming.method ?? "", url: incoming.url ?? "", headers: incoming.headers });
      const { host: _host, connection: _connection, ...headers } = incoming.headers;
      request(`${target}${incoming.url}`, {
        method: incoming.method as "GET" | "POST",
        headers: headers as Record<string, string>,
        body: chunks.length > 0 ? Buffer.concat(chunks) : null,
        dispatcher,
      }).then(
        async (answer) => {
          const body = Buffer.from(await answer.body.arrayBuffer());
          outgoing.writeHead(answer.statusCode, { "content-type": String(answer.headers["content-type"] ?? "application/json") }).end(body);
        },
        () => outgoing.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await dispatcher.close();
    },
  };
}
