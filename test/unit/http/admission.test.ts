import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { sameOrigin } from "../../../src/http/admission.js";

/** A request as `sameOrigin` reads it: its Host header, and whether it came over TLS. */
const requestTo = (host: string | undefined, encrypted = false) => ({ headers: host === undefined ? {} : { host }, socket: { encrypted } }) as unknown as IncomingMessage;

describe("sameOrigin (MCP's guard against DNS rebinding)", () => {
  it("accepts the adapter's own loopback origin, by name or address, IPv4 or IPv6, with its scheme", () => {
    expect(sameOrigin(requestTo("127.0.0.1:8080"), "http://127.0.0.1:8080", undefined)).toBe(true);
    expect(sameOrigin(requestTo("localhost:8080"), "http://localhost:8080", undefined)).toBe(true);
    expect(sameOrigin(requestTo("[::1]:8080"), "http://[::1]:8080", undefined)).toBe(true);
    expect(sameOrigin(requestTo("localhost:8443", true), "https://localhost:8443", undefined)).toBe(true);
  });

  it("refuses another scheme, port or host, a rebinding name whose Host matches, and a request with no Host", () => {
    expect(sameOrigin(requestTo("127.0.0.1:8080"), "https://127.0.0.1:8080", undefined)).toBe(false);
    expect(sameOrigin(requestTo("127.0.0.1:8080"), "http://127.0.0.1:8081", undefined)).toBe(false);
    expect(sameOrigin(requestTo("127.0.0.1:8080"), "http://localhost:8080", undefined)).toBe(false);
    expect(sameOrigin(requestTo("evil.example:8080"), "http://evil.example:8080", undefined)).toBe(false);
    expect(sameOrigin(requestTo("127.0.0.1.evil.example:8080"), "http://127.0.0.1.evil.example:8080", undefined)).toBe(false);
    expect(sameOrigin(requestTo(undefined), "http://127.0.0.1:8080", undefined)).toBe(false);
  });

  it("accepts PUBLIC_URL's origin exactly (scheme, host and port), whatever the Host", () => {
    const publicUrl = "https://adapter.example.com/base";
    expect(sameOrigin(requestTo("10.0.0.5:8080"), "https://adapter.example.com", publicUrl)).toBe(true);
    expect(sameOrigin(requestTo("10.0.0.5:8080"), "http://adapter.example.com", publicUrl)).toBe(false);
    expect(sameOrigin(requestTo("10.0.0.5:8080"), "https://adapter.example.com:444", publicUrl)).toBe(false);
    expect(sameOrigin(requestTo("10.0.0.5:8080"), "https://adapter.example.com.evil.net", publicUrl)).toBe(false);
    expect(sameOrigin(requestTo("10.0.0.5:8080"), "https://adapter.example.com", "not a url")).toBe(false);
  });
});
