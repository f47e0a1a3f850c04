import { describe, expect, it } from "vitest";
import { folderOf, sourceImports } from "./source-imports.js";

/** Folder → the folders its files import from (relative imports inside src only). */
function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const { from, to } of sourceImports()) {
    const targets = graph.get(folderOf(from)) ?? new Set<string>();
    graph.set(folderOf(from), targets);
    if (folderOf(to) !== folderOf(from)) targets.add(folderOf(to));
  }
  return graph;
}

/** A cycle in the graph, as a list of folders, or null. */
function findCycle(graph: Map<string, Set<string>>): string[] | null {
  const state = new Map<string, "visiting" | "done">();
  const path: string[] = [];
  const visit = (node: string): string[] | null => {
    if (state.get(node) === "done") return null;
    if (state.get(node) === "visiting") return [...path.slice(path.indexOf(node)), node];
    state.set(node, "visiting");
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(node, "done");
    return null;
  };
  for (const node of graph.keys()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return null;
}

describe("the source tree", () => {
  it("has no import cycle between its folders", () => {
    const graph = folderGraph();
    expect(graph.size).toBeGreaterThan(10);
    expect(findCycle(graph)?.join(" → ") ?? "no cycle").toBe("no cycle");
  });

  it("keeps the core free of everything else, and the dialects off the HTTP edge", () => {
    const graph = folderGraph();
    expect([...(graph.get("core") ?? [])]).toEqual([]);
    for (const folder of ["answer", "plan", "dialects", "upstream"]) expect(graph.get(folder)?.has("http")).toBe(false);
    // Telemetry sits low: everything may call it, it knows only the shared core types.
    expect([...(graph.get("telemetry") ?? [])].filter((folder) => folder !== "core")).toEqual([]);
  });

  it("finds a cycle when there is one (the checker itself)", () => {
    const graph = new Map([["a", new Set(["b"])], ["b", new Set(["c"])], ["c", new Set(["a"])]]);
    expect(findCycle(graph)).toEqual(["a", "b", "c", "a"]);
  });
});
