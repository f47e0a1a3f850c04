import type { Cluster, Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { openRedis } from "../../../src/redis/redis-connection.js";

const options = { commandTimeoutMs: 1000 };
const access = { username: undefined, password: undefined, tls: false };

describe("openRedis", () => {
  it("leaves renewing subscriptions to the adapter on every topology (ioredis's own renewal drops a promise that can reject)", () => {
    const single = openRedis({ kind: "single", url: "redis://127.0.0.1:1" }, options) as Redis;
    const sentinel = openRedis(
      { kind: "sentinel", sentinels: [{ host: "127.0.0.1", port: 1 }], master: "m", sentinelUsername: undefined, sentinelPassword: undefined, ...access },
      options,
    ) as Redis;
    const cluster = openRedis({ kind: "cluster", nodes: [{ host: "127.0.0.1", port: 1 }], ...access }, options) as Cluster;
    try {
      expect(single.options.autoResubscribe).toBe(false);
      expect(sentinel.options.autoResubscribe).toBe(false);
      expect(cluster.options.redisOptions?.autoResubscribe).toBe(false);
    } finally {
      for (const client of [single, sentinel, cluster]) client.disconnect();
    }
  });
});
