import { Cluster, Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { ANY_NODE, type ClusterView, clusterViewOf, masterConnection, nodeOfKey, ownsSlots } from "../../../src/redis/cluster-view.js";

/** A slot map of three masters over thirds of the slots, with connections to the masters the test names. */
function viewOf(owners: (string | undefined)[], connected: string[]): ClusterView {
  return {
    slots: Array.from({ length: 16384 }, (_, slot) => {
      const owner = owners[Math.floor((slot * 3) / 16384)];
      return owner === undefined ? undefined : [owner, "127.0.0.1:7100"];
    }),
    on: () => undefined,
    off: () => undefined,
    refreshSlotsCache: () => undefined,
    nodes: () =>
      connected.map((name) => {
        const [host, port] = name.split(":");
        return { options: { host, port: Number(port) }, ping: async () => name };
      }),
  };
}

describe("the cluster view", () => {
  it("is the client itself for a Cluster, and none for a single node", () => {
    const cluster = new Cluster([{ host: "127.0.0.1", port: 1 }], { lazyConnect: true });
    const single = new Redis({ lazyConnect: true });
    expect(clusterViewOf(cluster)).toBe(cluster);
    expect(clusterViewOf(single)).toBeNull();
  });

  it("names the master of a key's slot, or any node for a keyless command or a slot with no known owner", () => {
    // "bar" (slot 5061) is in the first third, "foo" (slot 12182) in the last.
    const view = viewOf(["127.0.0.1:7000", "127.0.0.1:7001", undefined], []);
    expect(nodeOfKey(view, "bar")).toBe("127.0.0.1:7000");
    expect(nodeOfKey(view, "x{bar}y")).toBe("127.0.0.1:7000");
    expect(nodeOfKey(view, "foo")).toBe(ANY_NODE);
    expect(nodeOfKey(view, null)).toBe(ANY_NODE);
  });

  it("says whether a node is still some slot's master (a replica named second does not count)", () => {
    const view = viewOf(["127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"], []);
    expect(ownsSlots(view, "127.0.0.1:7002")).toBe(true);
    expect(ownsSlots(view, "127.0.0.1:7100")).toBe(false);
    expect(ownsSlots(view, ANY_NODE)).toBe(false);
  });

  it("finds the connection to a master by its name, while the client has one", async () => {
    const view = viewOf([], ["127.0.0.1:7000", "127.0.0.1:7002"]);
    expect(await masterConnection(view, "127.0.0.1:7002")?.ping()).toBe("127.0.0.1:7002");
    expect(masterConnection(view, "127.0.0.1:7001")).toBeUndefined();
  });
});
