import { afterAll, beforeAll, expect, it } from "vitest";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { describeWith, REDIS_SERVERS } from "../../helpers/external-programs.js";
import { HandDrivenClient, pkcePair } from "../../helpers/oauth-client.js";
import { type RedisServer, startRedis } from "../../helpers/redis-server.js";
import { API_KEY, FIXTURE_DOCUMENTS, type RunningAdapter, startAdapter } from "../../helpers/start-stack.js";

describeWith(REDIS_SERVERS, "OAuth with Redis: revocation leaves no sealed key, and Redis stopped answers 503s", () => {
  let redis: RedisServer;
  let workspace: RunningWorkspace;
  let adapter: RunningAdapter;
  const prefix = "oauth-outage:";
  beforeAll(async () => {
    redis = await startRedis({ own: true });
    workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], apiKeys: [API_KEY], stepDelayMs: 10 });
    adapter = await startAdapter(workspace.url, { MCP_OAUTH: "on", REDIS_URL: redis.url, REDIS_KEY_PREFIX: prefix, OAUTH_SECRET: "a-shared-secret-of-at-least-32-characters" });
  }, 60_000);
  afterAll(async () => {
    await adapter?.close();
    await workspace?.close();
    await redis?.stop();
  });

  it("16: revoking an access token ends its grant: its tokens, the grant and the sealed key are gone from Redis", async () => {
    const client = await new HandDrivenClient(adapter.url).register();
    const { access, refresh } = await client.tokens(API_KEY);
    const sealed = await redis.client.keys(`${prefix}oauth:grant-key:*`);
    expect(sealed.length).toBe(1);
    const grantId = (sealed[0] as string).slice(`${prefix}oauth:grant-key:`.length);
    expect(await client.revoke(access)).toBe(200);
    expect((await client.listTools(access)).status).toBe(401);
    expect((await client.refresh(refresh)).body.error).toBe("invalid_grant");
    expect(await redis.client.exists(`${prefix}oauth:grant-key:${grantId}`, `${prefix}oauth:Grant:${grantId}`, `${prefix}oauth:grant:${grantId}`)).toBe(0);
  });

  it("24: Redis stopped: the token endpoint and /oauth/mcp answer 503 with Retry-After, the consent page an HTML 503", async () => {
    const client = await new HandDrivenClient(adapter.url).register();
    const { access } = await client.tokens(API_KEY);
    const opened = await client.open(client.authorizationUrl(pkcePair().challenge));
    if ("left" in opened) throw new Error("no consent page");
    await redis.stop();
    const token = await client.token({ grant_type: "refresh_token", refresh_token: "wsoauth_anything", resource: client.resource });
    expect(token.status).toBe(503);
    expect(token.body.error).toBe("temporarily_unavailable");
    const tools = await fetch(`${adapter.url}/oauth/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${access}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(tools.status).toBe(503);
    expect(Number(tools.headers.get("retry-after"))).toBeGreaterThan(0);
    const page = await client.browser.request(opened.pageUrl);
    expect(page.status).toBe(503);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    expect(Number(page.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await page.text()).toContain("briefly unavailable");
  });
});
