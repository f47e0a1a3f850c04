import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Config } from "../config/config.js";
import type { Adapter } from "./create-adapter.js";

/** A listening adapter, and how to stop it gracefully. */
export interface RunningServer {
  server: Server;
  /** `http://host:port` as bound. */
  url: string;
  /**
   * Graceful shutdown: readiness turns 503 at once and new requests are refused (503, `Connection:
   * close`) while the port stays open, so that probes and load balancers see the adapter draining
   * rather than a refused connection; requests and streams in flight get `shutdownGraceMs` to
   * finish; then open streams get an error frame and `[DONE]`, the port is closed and the remaining
   * sockets with it (`server.close()` alone never finishes while a stream is open).
   */
  shutdown(): Promise<void>;
}

/**
 * Serves the adapter on its port with server timeouts that stop slow-loris clients (headers and
 * request body must arrive in time) without cutting long responses: `requestTimeout` bounds
 * receiving the request, not streaming the answer.
 */
export async function startServer(
  adapter: Adapter,
  config: Pick<Config, "server">,
): Promise<RunningServer> {
  const settings = config.server;
  const server = createServer(
    { connectionsCheckingInterval: Math.min(1000, settings.headersTimeoutMs) },
    adapter.app,
  );
  server.headersTimeout = settings.headersTimeoutMs;
  server.requestTimeout = Math.max(settings.requestTimeoutMs, settings.headersTimeoutMs);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    // A deep accept queue: a burst of connections (a UI reconnecting its users) waits instead of being reset.
    server.listen({ port: settings.port, host: settings.host, backlog: 2048 }, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let stopping: Promise<void> | undefined;

  async function shutdown(): Promise<void> {
    const { finished } = await adapter.lifecycle.drain(settings.shutdownGraceMs);
    if (!finished) {
      adapter.logger.warn({ open: adapter.lifecycle.activeRequests }, "grace time over: ending open streams");
      await adapter.lifecycle.endStreams();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
    await adapter.close();
  }

  return {
    server,
    url: `http://${host}:${address.port}`,
    shutdown: () => {
      stopping ??= shutdown();
      return stopping;
    },
  };
}
