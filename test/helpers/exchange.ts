import { request } from "node:http";

/** A response read whole: status, headers, body as text. */
export interface Exchanged {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One request over node:http, which sends the headers given as they are — a `Host` of the test's
 * choosing too, as a browser led by a DNS-rebinding page sends it (fetch keeps its own).
 */
export function exchange(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; localAddress?: string } = {},
): Promise<Exchanged> {
  const target = new URL(url);
  const body = options.body;
  return new Promise((resolve, reject) => {
    const sent = request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? (body === undefined ? "GET" : "POST"),
        ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }),
        headers: { ...(body === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(body) }), ...options.headers },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString("utf8") }));
        response.on("error", reject);
      },
    );
    sent.on("error", reject);
    sent.end(body);
  });
}
