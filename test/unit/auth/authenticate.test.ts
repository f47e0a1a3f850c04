import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { createAuthenticator } from "../../../src/auth/authenticate.js";
import { credentialHash } from "../../../src/auth/credential-hash.js";
import { KeyRing } from "../../../src/auth/key-ring.js";

const requestWith = (authorization?: string) => ({ headers: authorization ? { authorization } : {} }) as IncomingMessage;

describe("createAuthenticator", () => {
  it("passes the client's credential through, keyed by its hash", () => {
    const identity = createAuthenticator({})(requestWith("Bearer sk-client"));
    const hash = credentialHash("sk-client");
    expect(identity).toEqual({ upstreamCredential: "sk-client", principal: hash, upstreamKey: hash, account: { id: `key:${hash.slice(0, 12)}`, label: "other" }, sharedUpstream: false });
  });

  it("with a deployment-held key, accepts only the adapter's keys and presents its own upstream", () => {
    const keys = new KeyRing({ clientKeys: [{ name: undefined, key: "ak-one" }, { name: undefined, key: "ak-two" }], gatewayKeys: [], file: false });
    const authenticate = createAuthenticator({ workspaceApiKey: "sk-upstream", keys });
    expect(authenticate(requestWith("Bearer ak-two"))).toEqual({
      upstreamCredential: "sk-upstream",
      principal: credentialHash("ak-two"),
      upstreamKey: credentialHash("sk-upstream"),
      account: { id: `key:${credentialHash("ak-two").slice(0, 12)}`, label: "other" },
      sharedUpstream: true,
    });
    expect(() => authenticate(requestWith("Bearer ak-three"))).toThrow(/Invalid API key/);
    expect(() => authenticate(requestWith())).toThrow();
  });

  it("refuses a key taken out of the key file at once, though its hash was remembered while it was valid", () => {
    const keys = new KeyRing({ clientKeys: [], gatewayKeys: [], file: true });
    keys.replaceFileKeys([{ name: "alice", key: "ak-file" }]);
    const authenticate = createAuthenticator({ workspaceApiKey: "sk-upstream", keys });
    for (let call = 0; call < 3; call += 1) expect(authenticate(requestWith("Bearer ak-file")).principal).not.toBe(credentialHash("ak-file"));
    keys.replaceFileKeys([{ name: "bob", key: "ak-other" }]);
    expect(() => authenticate(requestWith("Bearer ak-file"))).toThrow(/Invalid API key/);
  });

  it("hashes every one of many credentials right, however many it has remembered", () => {
    const authenticate = createAuthenticator({});
    for (let index = 0; index < 2500; index += 1) {
      const credential = `sk-client-${index % 1300}`;
      expect(authenticate(requestWith(`Bearer ${credential}`)).principal).toBe(credentialHash(credential));
    }
  });
});

describe("who asks (docs/governance.md#who-asks)", () => {
  const headers = { "x-litellm-user_api_key_user_id": "alice", "x-team": "search" };
  const request = (key: string, extra: Record<string, string> = {}) => ({ headers: { authorization: `Bearer ${key}`, ...extra } }) as unknown as IncomingMessage;
  const ring = new KeyRing({
    clientKeys: [{ name: "team-search", key: "sk-search-old" }, { name: "team-search", key: "sk-search-new" }, { name: undefined, key: "sk-bare" }],
    gatewayKeys: [{ name: "litellm", key: "sk-gateway" }],
    file: false,
  });
  const authenticate = createAuthenticator({ workspaceApiKey: "sk-upstream", keys: ring, identityHeaders: ["x-litellm-user_api_key_user_id", "x-team"] });

  it("is a named key's name, shared by the name's keys (a key being rotated), apart from any credential's hash", () => {
    const old = authenticate(request("sk-search-old"));
    expect(old.account).toEqual({ id: "team-search", label: "team-search" });
    expect(authenticate(request("sk-search-new")).principal).toBe(old.principal);
    expect(old.principal).not.toBe(credentialHash("sk-search-old"));
    expect(authenticate(request("sk-bare")).account).toEqual({ id: `key:${credentialHash("sk-bare").slice(0, 12)}`, label: "other" });
  });

  it("is the identity a gateway names in the first identity header it sends, each identity with its own principal", () => {
    const alice = authenticate(request("sk-gateway", headers));
    expect(alice.account).toEqual({ id: "litellm/alice", label: "litellm" });
    expect(alice.upstreamCredential).toBe("sk-upstream");
    const team = authenticate(request("sk-gateway", { "x-team": "search" }));
    expect(team.account.id).toBe("litellm/search");
    expect(new Set([alice.principal, team.principal, authenticate(request("sk-gateway")).principal]).size).toBe(3);
    expect(authenticate(request("sk-gateway")).account).toEqual({ id: "litellm", label: "litellm" });
  });

  it("ignores the identity headers from any key but a gateway's", () => {
    expect(authenticate(request("sk-search-old", headers)).account.id).toBe("team-search");
    expect(authenticate(request("sk-bare", headers)).principal).toBe(authenticate(request("sk-bare")).principal);
  });

  it("refuses an unknown key where keys are listed, also when the client's key goes upstream", () => {
    expect(() => authenticate(request("sk-unknown", headers))).toThrow(/Invalid API key/);
    const listedPassThrough = createAuthenticator({ keys: ring });
    expect(listedPassThrough(request("sk-bare")).upstreamCredential).toBe("sk-bare");
    expect(() => listedPassThrough(request("sk-unknown"))).toThrow(/Invalid API key/);
  });

  it("says the upstream credential is shared under the held key and for a gateway's key, and not for a key that goes upstream itself", () => {
    expect([authenticate(request("sk-search-old")), authenticate(request("sk-bare")), authenticate(request("sk-gateway", headers))].map((who) => who.sharedUpstream)).toEqual([true, true, true]);
    const listedPassThrough = createAuthenticator({ keys: ring });
    const passed = [request("sk-search-old"), request("sk-bare"), request("sk-gateway", headers), request("sk-gateway")].map((asked) => listedPassThrough(asked).sharedUpstream);
    expect(passed).toEqual([false, false, true, true]);
  });

  it("answers a gateway identity that cannot be told apart with a 400 naming the header", () => {
    expect(() => authenticate(request("sk-gateway", { "x-team": "a".repeat(257) }))).toThrow(/'x-team' must be printable ASCII of at most 256/);
    expect(() => authenticate(request("sk-gateway", { "x-team": "tab\there" }))).toThrow(/'x-team'/);
  });
});
