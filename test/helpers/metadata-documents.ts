import { lookup } from "node:dns/promises";
import { readFileSync } from "node:fs";
import { createServer as createTcpServer, type Server as TcpServer } from "node:net";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import type { MetadataFetchOptions, Resolve } from "../../src/oauth/metadata-fetch.js";
import { makeCertificates, type TestCertificates } from "./test-certificates.js";

/** Codex CLI's client ID metadata document, as chatgpt.com serves it (its client id is its own URL). */
export const CODEX_CLIENT_ID = "https://chatgpt.com/oauth/codex/client.json";

/** The document a well-known client publishes: a native client with loopback redirects, no secret. */
export function codexDocument(clientId = CODEX_CLIENT_ID): Record<string, unknown> {
  return {
    client_id: clientId,
    client_name: "Codex",
    client_uri: "https://chatgpt.com/codex",
    redirect_uris: ["http://127.0.0.1/callback", "http://localhost/callback"],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
    application_type: "native",
  };
}

/**
 * An HTTPS server on loopback that stands in for `chatgpt.com` (and other well-known clients'
 * hosts): a certificate for those names from a CA of the test's own, documents by path, and what
 * was asked of it. The adapter reaches it only through the production fetch, given a name
 * resolution that points those names here and that CA (`fetchOptions`).
 */
export async function startDocumentHost(names: readonly string[] = ["chatgpt.com", "claude.ai"]) {
  const certificates: TestCertificates = makeCertificates(names);
  const requested: string[] = [];
  const documents = new Map<string, { status?: number; headers?: Record<string, string>; body?: unknown; silent?: boolean }>();
  const server: Server = createServer({ cert: readFileSync(certificates.cert), key: readFileSync(certificates.key) }, (request, response) => {
    requested.push(`${request.headers.host ?? ""}${request.url ?? ""}`);
    const found = documents.get(request.url ?? "");
    if (found?.silent) return;
    if (!found) {
      response.statusCode = 404;
      response.end();
      return;
    }
    response.statusCode = found.status ?? 200;
    for (const [name, value] of Object.entries({ "content-type": "application/json", ...found.headers })) response.setHeader(name, value);
    response.end(found.body === undefined ? "" : JSON.stringify(found.body));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const resolve: Resolve = async (hostname) =>
    names.includes(hostname) ? [{ address: "127.0.0.1", port }] : lookup(hostname, { all: true, verbatim: true });
  return {
    port,
    requested,
    documents,
    /** The adapter's metadata fetch, as production builds it, with only the name resolution and the CA replaced. */
    fetchOptions: { resolve, ca: readFileSync(certificates.ca), allowedAddresses: ["127.0.0.1"] } satisfies MetadataFetchOptions,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
      certificates.remove();
    },
  };
}

/** A TCP listener that only counts connections: what must see none when a fetch is refused. */
export async function startCanary(): Promise<{ port: number; connections: () => number; close(): Promise<void> }> {
  let connections = 0;
  const server: TcpServer = createTcpServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
