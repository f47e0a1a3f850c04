import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import type { Config } from "../config/config.js";
import type { Adapter } from "./create-adapter.js";

/** A listening adapter, and how to stop it gracefully. */
export interface RunningServer {
  server: Server;
  /** `http://host:port` as bound. */
  url: string;
  /** `http://host:port` of `METRICS_PORT` as bound, when `/metrics` has a port of its own. */
  metricsUrl: string | undefined;
  /**
   * Closes every connection at once: the HTTP ones (`server.closeAllConnections()`) and the
   * WebSockets (upgraded, they are no HTTP connection's any more, yet `server.close()` waits for them).
   */
  closeAllConnections(): void;
  /** Closes the metrics port at once (what `shutdown` does last, for a caller that stops without draining). */
  closeMetrics(): Promise<void>;
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
  config: Pick<Config, "server" | "metrics">,
): Promise<RunningServer> {
  const settings = config.server;
  const server = createServer(
    { connectionsCheckingInterval: Math.min(1000, settings.headersTimeoutMs) },
    adapter.app,
  );
  // docs/responses-api.md#websocket-mode: `GET /v1/responses` upgraded, on the same port and route table.
  server.on("upgrade", adapter.upgrade);
  const upgraded = new Set<Duplex>();
  server.on("upgrade", (_request, socket: Duplex) => {
    upgraded.add(socket);
    socket.once("close", () => upgraded.delete(socket));
  });
  const closeAllConnections = () => {
    server.closeAllConnections();
    for (const socket of upgraded) socket.destroy();
  };
  server.headersTimeout = settings.headersTimeoutMs;
  server.requestTimeout = Math.max(settings.requestTimeoutMs, settings.headersTimeoutMs);
  server.keepAliveTimeout = 65_000;
  // A deep accept queue: a burst of connections (a UI reconnecting its users) waits instead of being reset.
  const url = await listen(server, settings.port, settings.host, 2048);
  // docs/observability.md#metrics: /metrics alone on a port of its own (a port taken closes the API's too).
  const metricsPort = config.metrics.port;
  const metricsServer = adapter.metricsApp && metricsPort !== undefined ? createServer(adapter.metricsApp) : undefined;
  const metricsUrl = metricsServer && metricsPort !== undefined
    ? await listen(metricsServer, metricsPort, settings.host, 511).catch((error: unknown) => {
      server.close();
      throw error;
    })
    : undefined;
  let stopping: Promise<void> | undefined;

  async function shutdown(): Promise<void> {
    const { finished } = await adapter.lifecycle.drain(settings.shutdownGraceMs);
    if (!finished) {
      adapter.logger.warn({ open: adapter.lifecycle.activeRequests }, "grace time over: ending open streams");
      await adapter.lifecycle.endStreams();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await Promise.all([closeNow(server, closeAllConnections), metricsServer && closeNow(metricsServer)]);
    await adapter.close();
  }

  return {
    server,
    url,
    metricsUrl,
    closeAllConnections,
    closeMetrics: async () => {
      if (metricsServer?.listening) await closeNow(metricsServer);
    },
    shutdown: () => {
      stopping ??= shutdown();
      return stopping;
    },
  };
}

/** Listens on `host:port`, and resolves with the address bound as `http://host:port`. */
async function listen(server: Server, port: number, host: string, backlog: number): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ port, host, backlog }, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
}

/** Closes a server and every connection it still holds. */
function closeNow(server: Server, closeAll: () => void = () => server.closeAllConnections()): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  closeAll();
  return closed;
}
