import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { basename, join } from "node:path";
import { projectRoot } from "../util/package-info.js";
import { DocumentIndex, loadPassages } from "./document-index.js";
import type { EmbeddedRealtime } from "./realtime/embedded-realtime.js";
import { watchDocuments } from "./watch-documents.js";
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

/** Where the embedded workspace says what it does with its documents (the adapter's logger, in `npm start`). */
export type WorkspaceLog = (level: "info" | "warn", fields: Record<string, unknown>, message: string) => void;

/** Settings for starting one; documents default to the project's README and docs folder. */
export interface StartOptions extends Omit<EmbeddedWorkspaceOptions, "index"> {
  documents?: readonly string[];
  host?: string;
  port?: number;
  /** Re-index the documents when they change (within a second), as `npm start` does. */
  watch?: boolean;
  log?: WorkspaceLog;
}

/** The project's own documents: README.md and docs/, found from this file's location. */
export function defaultDocuments(): string[] {
  const folder = projectRoot();
  return [join(folder, "README.md"), join(folder, "docs")].filter((path) => existsSync(path));
}

/** Indexes the documents and serves the embedded workspace over HTTP on loopback. */
export async function startEmbeddedWorkspace(options: StartOptions): Promise<RunningWorkspace> {
  const paths = options.documents ?? defaultDocuments();
  const log: WorkspaceLog = options.log ?? (() => undefined);
  const load = async () =>
    new DocumentIndex(await loadPassages(paths, (file, reason) => log("warn", { file, reason }, "embedded workspace: a document could not be read; it is skipped")));
  let index = await load();
  const { app, control, realtime } = createEmbeddedWorkspace({ ...options, index: () => index });
  // A change (or a burst of them) re-reads the documents; answers use the new index from then on.
  let reloading = Promise.resolve();
  const stopWatching = options.watch
    ? watchDocuments(paths, (files) => {
      reloading = reloading.then(async () => {
        index = await load();
        log("info", { changed: files.map((file) => basename(file)), documents: index.filenames.length }, "embedded workspace: documents re-indexed");
      });
    })
    : () => undefined;
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
        stopWatching();
        realtime?.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
