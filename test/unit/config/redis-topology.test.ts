import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../src/config/config.js";
import { describeTopology } from "../../../src/config/redis-topology.js";

const problems = (environment: Record<string, string>) => {
  try {
    loadConfig(environment);
    return "";
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
};

describe("Redis topology configuration", () => {
  it("reads one node, a cluster or Sentinel", () => {
    expect(loadConfig({}).redis).toBeUndefined();
    expect(loadConfig({ REDIS_URL: "rediss://user:pw@cache.example.com:6380/2" }).redis?.topology).toEqual({ kind: "single", url: "rediss://user:pw@cache.example.com:6380/2" });
    expect(loadConfig({ REDIS_CLUSTER_NODES: " a.example.com:7000, [::1]:7001 ,10.0.0.3:7002", REDIS_PASSWORD: "secret", REDIS_TLS: "on" }).redis?.topology).toEqual({
      kind: "cluster",
      nodes: [
        { host: "a.example.com", port: 7000 },
        { host: "::1", port: 7001 },
        { host: "10.0.0.3", port: 7002 },
      ],
      username: undefined,
      password: "secret",
      tls: true,
    });
    expect(loadConfig({ REDIS_SENTINELS: "s1:26379,s2:26379", REDIS_SENTINEL_MASTER: "mymaster", REDIS_USERNAME: "app", REDIS_SENTINEL_PASSWORD: "s" }).redis?.topology).toEqual({
      kind: "sentinel",
      sentinels: [
        { host: "s1", port: 26379 },
        { host: "s2", port: 26379 },
      ],
      master: "mymaster",
      sentinelUsername: undefined,
      sentinelPassword: "s",
      username: "app",
      password: undefined,
      tls: false,
    });
    // Credentials given beside a URL that names none go into it.
    const single = loadConfig({ REDIS_URL: "redis://cache:6379", REDIS_USERNAME: "app", REDIS_PASSWORD: "p@ss word" }).redis?.topology;
    expect(single).toEqual({ kind: "single", url: "redis://app:p%40ss%20word@cache:6379" });
    expect(loadConfig({ REDIS_CLUSTER_NODES: "n:1" }).redis?.clusterPolling).toBe(true);
  });

  it("refuses anything ambiguous or malformed, naming the variable", () => {
    expect(problems({ REDIS_URL: "redis://a:1", REDIS_CLUSTER_NODES: "b:2" })).toMatch(/REDIS_CLUSTER_NODES: set only one of REDIS_URL, REDIS_CLUSTER_NODES/);
    expect(problems({ REDIS_CLUSTER_NODES: "b:2", REDIS_SENTINELS: "c:3", REDIS_SENTINEL_MASTER: "m" })).toMatch(/set only one of/);
    expect(problems({ REDIS_SENTINELS: "c:3" })).toMatch(/REDIS_SENTINEL_MASTER: required with REDIS_SENTINELS/);
    expect(problems({ REDIS_SENTINEL_MASTER: "m" })).toMatch(/REDIS_SENTINEL_MASTER: only applies with REDIS_SENTINELS/);
    expect(problems({ REDIS_CLUSTER_NODES: "a:1,b,c:99999,d:e" })).toMatch(/'b' is not host:port[\s\S]*'c:99999'[\s\S]*'d:e'/);
    expect(problems({ REDIS_CLUSTER_NODES: " , " })).toMatch(/must list at least one host:port/);
    expect(problems({ REDIS_PASSWORD: "x" })).toMatch(/REDIS_PASSWORD: only applies with REDIS_URL/);
    expect(problems({ REDIS_URL: "redis://u:p@a:1", REDIS_PASSWORD: "x" })).toMatch(/carries its own credentials/);
    expect(problems({ REDIS_URL: "redis://a:1", REDIS_TLS: "on" })).toMatch(/with REDIS_URL, ask for TLS with rediss:\/\//);
    expect(problems({ REDIS_URL: "http://a:1" })).toMatch(/REDIS_URL/);
    expect(problems({ REDIS_CLUSTER_NODES: "a:1", REDIS_KEY_PREFIX: "app{x}:" })).toMatch(/REDIS_KEY_PREFIX: must not contain \{ or \}/);
  });

  it("describes where Redis is without its credentials", () => {
    const described = [
      loadConfig({ REDIS_URL: "rediss://user:secret@cache:6380" }),
      loadConfig({ REDIS_CLUSTER_NODES: "a:1,b:2", REDIS_PASSWORD: "secret", REDIS_TLS: "on" }),
      loadConfig({ REDIS_SENTINELS: "s:26379", REDIS_SENTINEL_MASTER: "m", REDIS_SENTINEL_PASSWORD: "secret" }),
    ].map((config) => describeTopology((config.redis as NonNullable<typeof config.redis>).topology));
    expect(described).toEqual(["rediss://cache:6380", "cluster a:1,b:2 (TLS)", "sentinel m@s:26379"]);
    for (const text of described) expect(text).not.toContain("secret");
  });
});
