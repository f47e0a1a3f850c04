import { describe, expect, it } from "vitest";
import { hostPolicy, originOf, refusalOf } from "../../../../src/upstream/realtime/allowed-hosts.js";

describe("the realtime host policy", () => {
  it("allows only the upstream's own host by default", () => {
    const policy = hostPolicy("https://api.example.com/v2", []);
    expect(refusalOf("wss://api.example.com/connection/websocket", policy)).toBeNull();
    expect(refusalOf("wss://API.example.com:8443/ws", policy)).toBeNull();
    expect(refusalOf("wss://evil.example.net/ws", policy)).toMatch(/REALTIME_ALLOWED_HOSTS/);
    expect(refusalOf("wss://api.example.com.evil.net/ws", policy)).toMatch(/REALTIME_ALLOWED_HOSTS/);
  });

  it("allows the configured hosts and subdomain patterns instead", () => {
    const policy = hostPolicy("https://api.example.com", ["realtime.example.com", "*.push.example.com"]);
    expect(refusalOf("wss://realtime.example.com/ws", policy)).toBeNull();
    expect(refusalOf("wss://eu.push.example.com/ws", policy)).toBeNull();
    expect(refusalOf("wss://push.example.com/ws", policy)).not.toBeNull();
    expect(refusalOf("wss://api.example.com/ws", policy)).not.toBeNull();
  });

  it("requires wss for an https upstream off loopback, and only ws or wss at all", () => {
    const tls = hostPolicy("https://api.example.com", []);
    expect(refusalOf("ws://api.example.com/ws", tls)).toMatch(/wss/);
    const local = hostPolicy("https://127.0.0.1:8443", []);
    expect(refusalOf("ws://127.0.0.1:8000/ws", local)).toBeNull();
    const plain = hostPolicy("http://127.0.0.1:8081", []);
    expect(refusalOf("ws://127.0.0.1:8081/connection/websocket", plain)).toBeNull();
    expect(refusalOf("http://127.0.0.1:8081/connection/websocket", plain)).toMatch(/scheme/);
    expect(refusalOf("not a url", plain)).toBe("not a URL");
    expect(refusalOf("ws://[::1]:9000/ws", hostPolicy("http://[::1]:8081", []))).toBeNull();
  });

  it("logs an endpoint by its origin only (the path or query may carry a token)", () => {
    expect(originOf("wss://rt.example.com:8443/connection/websocket?token=secret")).toBe("wss://rt.example.com:8443");
  });
});
