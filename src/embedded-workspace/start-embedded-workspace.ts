import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { projectRoot } from "../util/package-info.js";
import { DocumentIndex, loadPassages } from "./document-index.js";
import type { EmbeddedRealtime } from "./realtime/embedded-realtime.js";
import {
  createEmbeddedWorkspace,
  type EmbeddedWorkspaceControl,
  type EmbeddedWorkspaceOptions,
} from "./workspace-app.js";

/** A running embedded workspace: where it listens, what tests can steer, how to stop it. */
export interface RunningWorkspace {
  url: string;
  control: EmbeddedWorkspaceControl;
  server: Server;
  /** Its realtime channel (null when turned off). */
  realtime: EmbeddedRealtime | null;
  close(): Promise<void>;
}

/** Settings for starting one; documents default to the project's README and docs folder. */
export interface StartOptions extends Omit<EmbeddedWorkspaceOptions, "index"> {
  documents?: readonly string[];
  host?: string;
  port?: number;
}

/** The project's own documents: README.md and docs/, found from this file's location. */
export function defaultDocuments(): string[] {
  const folder = projectRoot();
  return [join(folder, "README.md"), join(folder, "docs")].filter((path) => existsSync(path));
}

/** Indexes the documents and serves the embedded workspace over HTTP on loopback. */
export async function startEmbeddedWorkspace(options: StartOptions): Promise<RunningWorkspace> {
  const index = new DocumentIndex(await loadPassages(options.documents ?? defaultDocuments()));
  const { app, control, realtime } = createEmbeddedWorkspace({ ...options, index });
  const server = createServer(app);
  if (realtime) server.on("upgrade", (request, socket, head) => realtime.handleUpgrade(request, socket, head));
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    control,
    server,
    realtime,
    close: () =>
      new Promise<void>((resolve) => {
        realtime?.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
