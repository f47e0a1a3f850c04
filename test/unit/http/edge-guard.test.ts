import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/config.js";
import { edgeGuard, hostAnswered, sameOrigin } from "../../../src/http/edge-guard.js";

// docs/operating.md#a-local-workspace-stays-local: the edge's guard against DNS rebinding.

/** A request as the guard reads it: its Host and Origin headers, and whether it came over TLS. */
const requestTo = (host: string | undefined, origin?: string, encrypted = false) =>
  ({ headers: { ...(host === undefined ? {} : { host }), ...(origin === undefined ? {} : { origin }) }, socket: { encrypted } }) as unknown as IncomingMessage;
/** The guard's settings as `loadConfig` makes them from an environment. */
const server = (environment: Record<string, string> = {}) => loadConfig(environment).server;
const loopbackOnly = server();

describe("sameOrigin (the browser origin that is the adapter's own)", () => {
  it("accepts the adapter's own loopback origin, by name or address, IPv4 or IPv6, with its scheme", () => {
    expect(sameOrigin(requestTo("127.0.0.1:8080"), "http://127.0.0.1:8080", loopbackOnly)).toBe(true);
    expect(sameOrigin(requestTo("localhost:8080"), "http://localhost:8080", loopbackOnly)).toBe(true);
    expect(sameOrigin(requestTo("[::1]:8080"), "http://[::1]:8080", loopbackOnly)).toBe(true);
    expect(sameOrigin(requestTo("localhost:8443", undefined, true), "https://localhost:8443", loopbackOnly)).toBe(true);
  });

  it("refuses another scheme, port or host, a rebinding name whose Host matches, and a request with no Host", () => {
    expect(sameOrigin(requestTo("127.0.0.1:8080"), "https://127.0.0.1:8080", loopbackOnly)).toBe(false);
    expect(sameOrigin(requestTo("127.0.0.1:8080"), "http://127.0.0.1:8081", loopbackOnly)).toBe(false);
    expect(sameOrigin(requestTo("127.0.0.1:8080"), "http://localhost:8080", loopbackOnly)).toBe(false);
    expect(sameOrigin(requestTo("evil.example:8080"), "http://evil.example:8080", loopbackOnly)).toBe(false);
    expect(sameOrigin(requestTo("127.0.0.1.evil.example:8080"), "http://127.0.0.1.evil.example:8080", loopbackOnly)).toBe(false);
    expect(sameOrigin(requestTo(undefined), "http://127.0.0.1:8080", loopbackOnly)).toBe(false);
  });

  it("accepts PUBLIC_URL's origin exactly (scheme, host and port), whatever the Host", () => {
    const published = server({ PUBLIC_URL: "https://adapter.example.com/base" });
    expect(sameOrigin(requestTo("10.0.0.5:8080"), "https://adapter.example.com", published)).toBe(true);
    expect(sameOrigin(requestTo("10.0.0.5:8080"), "http://adapter.example.com", published)).toBe(false);
    expect(sameOrigin(requestTo("10.0.0.5:8080"), "https://adapter.example.com:444", published)).toBe(false);
    expect(sameOrigin(requestTo("10.0.0.5:8080"), "https://adapter.example.com.evil.net", published)).toBe(false);
  });

  it("accepts a page served on a host of ALLOWED_HOSTS as the adapter's own", () => {
    const listed = server({ ALLOWED_HOSTS: "adapter.intranet, *.tools.example" });
    expect(sameOrigin(requestTo("adapter.intranet:8080"), "http://adapter.intranet:8080", listed)).toBe(true);
    expect(sameOrigin(requestTo("a.tools.example"), "http://a.tools.example", listed)).toBe(true);
    expect(sameOrigin(requestTo("tools.example"), "http://tools.example", listed)).toBe(false);
  });
});

describe("hostAnswered (the Host values the adapter answers to)", () => {
  it("answers loopback names on any port: localhost and its subdomains, 127.0.0.0/8, [::1]", () => {
    for (const host of ["localhost", "localhost:8080", "app.localhost:3000", "127.0.0.1:1", "127.255.0.9", "[::1]:8080", "LOCALHOST:80"]) {
      expect(hostAnswered(host, []), host).toBe(true);
    }
  });

  it("does not answer other names, look-alikes, or what is not a Host value", () => {
    for (const host of ["attacker.example:18080", "localhost.", "localhost.evil.example", "127.0.0.1.evil.example", "128.0.0.1", "127.0.0.256", "[::2]", "user@localhost", "localhost:80:80", "localhost/x", ""]) {
      expect(hostAnswered(host, []), host).toBe(false);
    }
  });

  it("answers the listed hosts, and the subdomains of a *.domain entry (not the domain itself)", () => {
    const allowed = server({ ALLOWED_HOSTS: "adapter.intranet,*.tools.example,[fd00::1]", PUBLIC_URL: "https://adapter.example.com" }).hosts.allowed;
    for (const host of ["adapter.intranet", "ADAPTER.intranet:9000", "a.tools.example", "[fd00::1]:8080", "adapter.example.com"]) expect(hostAnswered(host, allowed), host).toBe(true);
    for (const host of ["tools.example", "adapter.intranet.evil", "evil-adapter.example.com"]) expect(hostAnswered(host, allowed), host).toBe(false);
  });
});

describe("edgeGuard", () => {
  it("with the embedded workspace, refuses a foreign Host with a 421 on every path but the probes", () => {
    const guard = edgeGuard(loopbackOnly);
    for (const path of ["/v1/chat/completions", "/documents/demo/a.md", "/", "/metrics", "/oauth/authorize"]) {
      expect(guard(requestTo("attacker.example:8080"), path), path).toMatchObject({ status: 421, code: "host_not_allowed" });
    }
    expect(guard(requestTo("attacker.example:8080"), "/health")).toBeUndefined();
    expect(guard(requestTo("attacker.example:8080"), "/ready")).toBeUndefined();
    expect(guard(requestTo("127.0.0.1:8080"), "/v1/models")).toBeUndefined();
  });

  it("refuses each request on its own: a Host or an Origin that passed before lets nothing else through", () => {
    const guard = edgeGuard(loopbackOnly);
    expect(guard(requestTo("127.0.0.1:8080", "http://127.0.0.1:8080"), "/v1/models")).toBeUndefined();
    expect(guard(requestTo("127.0.0.1:8080", "http://127.0.0.1:8080"), "/v1/models")).toBeUndefined();
    expect(guard(requestTo("attacker.example:8080"), "/v1/models")).toMatchObject({ status: 421 });
    expect(guard(requestTo("127.0.0.1:8080", "http://attacker.example"), "/v1/models")).toMatchObject({ status: 403 });
    expect(guard(requestTo("localhost:8080", "http://127.0.0.1:8080"), "/v1/models")).toMatchObject({ status: 403 });
    expect(guard(requestTo("127.0.0.1:8080", "http://127.0.0.1:8080"), "/v1/models")).toBeUndefined();
  });

  it("with a real workspace, leaves the Host to the proxy in front unless ALLOWED_HOSTS lists hosts", () => {
    const upstream = { WORKSPACE_BASE_URL: "https://workspace.example.com" };
    expect(edgeGuard(server(upstream))(requestTo("adapter.internal:8080"), "/v1/models")).toBeUndefined();
    const listed = edgeGuard(server({ ...upstream, ALLOWED_HOSTS: "adapter.example.com" }));
    expect(listed(requestTo("adapter.example.com"), "/v1/models")).toBeUndefined();
    expect(listed(requestTo("adapter.internal:8080"), "/v1/models")).toMatchObject({ status: 421 });
  });

  it("refuses a foreign browser Origin on the answer, document and tool routes, not on pages", () => {
    const guard = edgeGuard(loopbackOnly);
    for (const path of ["/v1/chat/completions", "/v1/responses", "/documents/demo/a.md", "/mcp", "/mcp/acme", "/oauth/mcp"]) {
      expect(guard(requestTo("127.0.0.1:8080", "http://attacker.example"), path), path).toMatchObject({ status: 403, code: "origin_not_allowed" });
      expect(guard(requestTo("127.0.0.1:8080", "http://127.0.0.1:8080"), path), path).toBeUndefined();
      expect(guard(requestTo("127.0.0.1:8080"), path), path).toBeUndefined();
    }
    expect(guard(requestTo("127.0.0.1:8080", "http://attacker.example"), "/oauth/interaction/x")).toBeUndefined();
    expect(edgeGuard(server({ CORS_ORIGINS: "http://attacker.example" }))(requestTo("127.0.0.1:8080", "http://attacker.example"), "/v1/models")).toBeUndefined();
  });
});
