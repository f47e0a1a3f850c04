import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { createAuthenticator } from "../../../src/auth/authenticate.js";
import { credentialHash } from "../../../src/auth/credential-hash.js";

const requestWith = (authorization?: string) => ({ headers: authorization ? { authorization } : {} }) as IncomingMessage;

describe("createAuthenticator", () => {
  it("passes the client's credential through, keyed by its hash", () => {
    const identity = createAuthenticator({})(requestWith("Bearer sk-client"));
    expect(identity).toEqual({ upstreamCredential: "sk-client", principal: credentialHash("sk-client"), upstreamKey: credentialHash("sk-client") });
  });

  it("with a deployment-held key, accepts only the adapter's keys and presents its own upstream", () => {
    const authenticate = createAuthenticator({ workspaceApiKey: "sk-upstream", adapterApiKeys: ["ak-one", "ak-two"] });
    expect(authenticate(requestWith("Bearer ak-two"))).toEqual({
      upstreamCredential: "sk-upstream",
      principal: credentialHash("ak-two"),
      upstreamKey: credentialHash("sk-upstream"),
    });
    expect(() => authenticate(requestWith("Bearer ak-three"))).toThrow(/Invalid API key/);
    expect(() => authenticate(requestWith())).toThrow();
  });
});
