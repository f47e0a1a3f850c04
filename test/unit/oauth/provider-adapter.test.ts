import { describe, expect, it } from "vitest";
import { MemoryOAuthStorage, type OAuthStorage } from "../../../src/oauth/oauth-storage.js";
import { StoreUnavailableError } from "../../../src/redis/store-unavailable-error.js";
import { CLIENT_TTL_SECONDS, DEFAULT_TTL_SECONDS, providerAdapter } from "../../../src/oauth/provider-adapter.js";

class AlreadyUsed extends Error {}

const revoked: string[] = [];
const hooks = { alreadyConsumed: () => new AlreadyUsed(), revokeGrant: async (grantId: string) => void revoked.push(grantId) };

describe("the authorization server's storage adapter", () => {
  const clock = { now: () => 1_000_000, setTimeout: () => undefined, clearTimeout: () => undefined };

  it("consumes a code once, whoever asks first: a second consume fails", async () => {
    const adapter = providerAdapter(new MemoryOAuthStorage(clock), hooks)("AuthorizationCode");
    await adapter.upsert("code-1", { grantId: "g", exp: 2_000_000_000 }, 60);
    const results = await Promise.allSettled([adapter.consume("code-1"), adapter.consume("code-1")]);
    expect(results.map((result) => result.status).sort()).toEqual(["fulfilled", "rejected"]);
    // Two redemptions at once: one of them is a thief, so the whole grant goes.
    expect(revoked).toContain("g");
    expect((await adapter.find("code-1"))?.consumed).toBeTypeOf("number");
  });

  it("keeps a registered client 90 days, not for ever", async () => {
    let now = 1_000_000;
    const storage = new MemoryOAuthStorage({ ...clock, now: () => now });
    const clients = providerAdapter(storage, hooks)("Client");
    await clients.upsert("client-1", { client_id: "client-1" });
    now += (CLIENT_TTL_SECONDS - 1) * 1000;
    expect(await clients.find("client-1")).toEqual({ client_id: "client-1" });
    now += 2000;
    expect(await clients.find("client-1")).toBeUndefined();
  });

  it("gives every other model a lifetime: a registration access token, or any model the library adds, is not kept for ever", async () => {
    let now = 1_000_000;
    const storage = new MemoryOAuthStorage({ ...clock, now: () => now });
    const tokens = providerAdapter(storage, hooks)("RegistrationAccessToken");
    await tokens.upsert("rat-1", { clientId: "c" });
    now += (DEFAULT_TTL_SECONDS + 1) * 1000;
    expect(await tokens.find("rat-1")).toBeUndefined();
  });

  it("stores secret ids (tokens, codes) under their hash, and revokes a grant's records together", async () => {
    const storage = new MemoryOAuthStorage(clock);
    const tokens = providerAdapter(storage, hooks)("AccessToken");
    const refresh = providerAdapter(storage, hooks)("RefreshToken");
    await tokens.upsert("wsoauth_secret-token", { grantId: "g1" }, 60);
    await refresh.upsert("wsoauth_refresh", { grantId: "g1" }, 60);
    await tokens.upsert("wsoauth_other", { grantId: "g2" }, 60);
    expect(await storage.get("AccessToken:wsoauth_secret-token")).toBeUndefined();
    expect(await tokens.find("wsoauth_secret-token")).toEqual({ grantId: "g1" });
    await tokens.revokeByGrantId("g1");
    expect(await tokens.find("wsoauth_secret-token")).toBeUndefined();
    expect(await refresh.find("wsoauth_refresh")).toBeUndefined();
    expect(await tokens.find("wsoauth_other")).toEqual({ grantId: "g2" });
  });

  it("turns a store that does not answer into the error it is given for that (the library would send a 500 for an error it does not know)", async () => {
    const silent = new Proxy(new MemoryOAuthStorage(clock), {
      get: (target, name) => (typeof name === "string" && name !== "constructor" ? () => Promise.reject(new StoreUnavailableError("timed out")) : Reflect.get(target, name)),
    }) as OAuthStorage;
    class Unavailable extends Error {}
    const clients = providerAdapter(silent, { ...hooks, unavailable: (cause) => new Unavailable(cause.message) })("Client");
    await expect(clients.find("client-1")).rejects.toBeInstanceOf(Unavailable);
    await expect(clients.upsert("client-1", { client_id: "client-1" })).rejects.toBeInstanceOf(Unavailable);
    // Other errors pass as they are: a second consume is still the library's invalid_grant.
    const codes = providerAdapter(new MemoryOAuthStorage(clock), { ...hooks, unavailable: (cause) => new Unavailable(cause.message) })("AuthorizationCode");
    await codes.upsert("code-1", { grantId: "g", exp: 2_000_000_000 }, 60);
    await codes.consume("code-1");
    await expect(codes.consume("code-1")).rejects.toBeInstanceOf(AlreadyUsed);
  });

  it("treats a stored record that does not parse as absent, rather than cast it: not JSON, null, an array, a grant id of the wrong type", async () => {
    const storage = new MemoryOAuthStorage(clock);
    const codes = providerAdapter(storage, hooks)("AuthorizationCode");
    const sessions = providerAdapter(storage, hooks)("Session");
    for (const text of ["{not json", "null", "[1]", JSON.stringify({ grantId: 7 })]) {
      await storage.set("Session:s-1", text, 60);
      expect(await sessions.find("s-1")).toBeUndefined();
      await storage.set("sessionUid:u-1", "s-1", 60);
      expect(await sessions.findByUid("u-1")).toBeUndefined();
    }
    await codes.upsert("code-2", { grantId: "g-2", exp: 2_000_000_000 }, 60);
    const [stored] = [...(await storage.members("grant:g-2"))];
    await storage.set(stored as string, "null", 60);
    expect(await codes.find("code-2")).toBeUndefined();
    // Consumed once, as a code of no grant; a second time refused.
    await codes.consume("code-2");
    await expect(codes.consume("code-2")).rejects.toBeInstanceOf(AlreadyUsed);
  });
});

