import { afterAll, beforeAll, expect, it } from "vitest";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { describeWith, REDIS } from "../../helpers/external-programs.js";
import { HandDrivenClient, pkcePair } from "../../helpers/oauth-client.js";
import { freePort, type RedisServer, startRedis } from "../../helpers/redis-server.js";
import { API_KEY, FIXTURE_DOCUMENTS, type RunningAdapter, startAdapter } from "../../helpers/start-stack.js";

describeWith(REDIS, "OAuth on two replicas sharing a real redis-server", () => {
  let redis: RedisServer;
  let workspace: RunningWorkspace;
  let a: RunningAdapter;
  let b: RunningAdapter;
  let publicUrl: string;
  const prefix = "oauth-replicas:";
  beforeAll(async () => {
    redis = await startRedis();
    workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme", "globex"], apiKeys: [API_KEY], stepDelayMs: 10 });
    const port = await freePort();
    // Both behind one address (as behind a load balancer): the first replica's.
    publicUrl = `http://127.0.0.1:${port}`;
    const environment = {
      MCP_OAUTH: "on",
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: prefix,
      OAUTH_SECRET: "a-shared-secret-of-at-least-32-characters",
      PUBLIC_URL: publicUrl,
      RATE_LIMIT_RPM: "2",
    };
    a = await startAdapter(workspace.url, { ...environment, PORT: String(port) });
    b = await startAdapter(workspace.url, environment);
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await workspace?.close();
    await redis?.stop();
  });

  it("a token issued on one works on the other, rotation and revocation hold on both, and nothing secret is stored in the clear", async () => {
    const resource = `${publicUrl}/oauth/mcp`;
    const onA = await new HandDrivenClient(a.url, undefined, resource).register();
    const onB = new HandDrivenClient(b.url, undefined, resource);
    onB.clientId = onA.clientId;
    // Consent on A, the code redeemed on B.
    const { verifier, challenge } = pkcePair();
    const callback = await onA.authorize(challenge, API_KEY, "acme");
    const tokens = await onB.exchange(callback.searchParams.get("code") as string, verifier);
    expect(tokens.status).toBe(200);
    const access = tokens.body.access_token as string;
    expect((await onA.listTools(access, `${a.url}/oauth/mcp`)).status).toBe(200);
    expect((await onB.listTools(access, `${b.url}/oauth/mcp`)).status).toBe(200);
    // Refreshed on B; the rotated-out token replayed on A is refused (and ends the grant on both).
    const rotated = await onB.refresh(tokens.body.refresh_token);
    expect(rotated.status).toBe(200);
    const second = await onA.tokens(API_KEY);
    expect((await onA.refresh(tokens.body.refresh_token)).body.error).toBe("invalid_grant");
    expect((await onB.listTools(rotated.body.access_token, `${b.url}/oauth/mcp`)).status).toBe(401);
    // Revoked on A: refused on B at once.
    expect((await onB.listTools(second.access, `${b.url}/oauth/mcp`)).status).toBe(200);
    expect(await onA.revoke(second.refresh)).toBe(200);
    expect((await onB.listTools(second.access, `${b.url}/oauth/mcp`)).status).toBe(401);
    expect((await onB.refresh(second.refresh)).body.error).toBe("invalid_grant");

    const keys = await redis.client.keys(`${prefix}oauth:*`);
    expect(keys.length).toBeGreaterThan(0);
    const values = await Promise.all(keys.map(async (key) => ((await redis.client.type(key)) === "string" ? redis.client.get(key) : (await redis.client.smembers(key)).join(" "))));
    const stored = `${keys.join(" ")} ${values.join(" ")}`;
    for (const secret of [API_KEY, access, tokens.body.refresh_token, second.access, second.refresh]) expect(stored).not.toContain(secret);
  });

  it("rate limits count a grant's calls as its key's: static-key and OAuth calls share one limit across replicas", async () => {
    const resource = `${publicUrl}/oauth/mcp`;
    const client = await new HandDrivenClient(a.url, undefined, resource).register();
    const { access } = await client.tokens(API_KEY, "globex");
    const ask = { name: "ask", arguments: { question: "What does the adapter do?" } };
    const byKey = await client.callTool(`Bearer ${API_KEY}`, ask, `${a.url}/mcp`, { "service-workspace": "globex" });
    expect(byKey.status).toBe(200);
    const byToken = await client.callTool(`Bearer ${access}`, ask, `${b.url}/oauth/mcp`);
    expect(byToken.status).toBe(200);
    const third = await client.callTool(`Bearer ${access}`, ask, `${a.url}/oauth/mcp`);
    expect(third.status).toBe(429);
  });
});
