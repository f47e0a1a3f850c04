import { describe, expect, it } from "vitest";
import { folderOf, sourceFolders, sourceImports } from "./source-imports.js";

/**
 * The folders of src in layers, from the bottom up (docs/architecture.md#modules): a module imports
 * only from a lower layer or its own folder, never from its layer's other folders nor from above.
 * A new folder takes its place here; an import that would run back up is refused by the test below
 * before it becomes a cycle.
 */
const LAYERS: readonly (readonly string[])[] = [
  ["core", "util", "metrics"],
  ["errors", "telemetry", "tokens", "structured"],
  ["config", "plan"],
  ["auth"],
  ["upstream"],
  ["answer", "redis"],
  ["dialects", "chat-ui-tasks", "limits", "usage", "audit"],
  ["continuity", "oauth"],
  // The browser pages import nothing of the server; the answer card reuses the playground's Markdown renderer.
  ["playground"],
  ["http", "embedded-workspace", "mcp-app"],
  ["server"],
  // `check` starts the adapter itself (server) beside its probes of the upstream.
  ["check"],
  ["."],
];

/**
 * Within the HTTP edge, from the bottom up: its own modules (the answer runner's deliveries,
 * `delivery/`, among them), each dialect's edge (the MCP transport and tasks, `mcp/`; the Responses
 * API's continuation, turns and resumption, `responses/`), the routes (`routes/`), and the app that
 * builds the route table from them. A module of the edge that needs something of a route (a
 * schema, an operation) takes it from where the route takes it.
 */
const EDGE_LAYERS: readonly ((path: string) => boolean)[] = [
  (path) => (/^http\/[^/]+\.ts$/.test(path) && path !== "http/app.ts") || path.startsWith("http/delivery/"),
  (path) => path.startsWith("http/mcp/") || path.startsWith("http/responses/"),
  (path) => path.startsWith("http/routes/"),
  (path) => path === "http/app.ts",
];

const layerOf = (folder: string) => LAYERS.findIndex((layer) => layer.includes(folder));
const edgeLayerOf = (path: string) => EDGE_LAYERS.findIndex((matches) => matches(path));

describe("the layers of the source tree", () => {
  it("places every folder of src in a layer", () => {
    const unplaced = sourceFolders().filter((folder) => layerOf(folder) < 0);
    expect(unplaced, "add each to LAYERS in test/architecture/layers.test.ts, where its imports allow").toEqual([]);
  });

  it("has no import that runs back up: from a folder to its own layer's other folders or a higher one", () => {
    const upward = sourceImports()
      .filter(({ from, to }) => folderOf(from) !== folderOf(to) && layerOf(folderOf(to)) >= layerOf(folderOf(from)))
      .map(({ from, to }) => `${from} → ${to}`);
    expect(upward).toEqual([]);
  });

  it("has no import that runs back up inside the HTTP edge (the edge's modules never import a route)", () => {
    const upward = sourceImports()
      .filter(({ from, to }) => folderOf(from) === "http" && folderOf(to) === "http" && edgeLayerOf(to) > edgeLayerOf(from))
      .map(({ from, to }) => `${from} → ${to}`);
    expect(upward).toEqual([]);
  });
});
