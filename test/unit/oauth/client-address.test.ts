import type { IncomingMessage } from "node:http";
import { BlockList } from "node:net";
import { describe, expect, it } from "vitest";
import { addressBucket, clientAddress } from "../../../src/oauth/client-address.js";

const request = (peer: string, forwarded?: string) =>
  ({ socket: { remoteAddress: peer }, headers: forwarded === undefined ? {} : { "x-forwarded-for": forwarded } }) as unknown as IncomingMessage;

describe("the client address the OAuth limits count", () => {
  const proxies = new BlockList();
  proxies.addSubnet("10.0.0.0", 8, "ipv4");
  proxies.addAddress("fd00::2", "ipv6");

  it("is the TCP peer when it is not a trusted proxy: a forwarded header from anyone else changes nothing", () => {
    expect(clientAddress(request("203.0.113.5", "1.2.3.4"), proxies)).toBe("203.0.113.5");
    expect(clientAddress(request("::ffff:203.0.113.5"), undefined)).toBe("203.0.113.5");
    expect(clientAddress(request("10.0.0.1", "1.2.3.4"), undefined)).toBe("10.0.0.1");
    // An IPv4-mapped peer in hex groups is the same client as its dotted spelling.
    expect(clientAddress(request("::ffff:cb00:7105"), undefined)).toBe("203.0.113.5");
  });

  it("behind trusted proxies, is the right-most hop that is not one of them (what the client wrote further left proves nothing)", () => {
    expect(clientAddress(request("10.0.0.1", "1.2.3.4"), proxies)).toBe("1.2.3.4");
    expect(clientAddress(request("10.0.0.1", "6.6.6.6, 1.2.3.4, 10.0.0.9"), proxies)).toBe("1.2.3.4");
    expect(clientAddress(request("::ffff:10.0.0.1", "1.2.3.4"), proxies)).toBe("1.2.3.4");
    expect(clientAddress(request("fd00::2", "2001:4860:1:2:3:4:5:6"), proxies)).toBe("2001:4860:1:2::/64");
    // A hop that is no address ends the reading: the last address read counts.
    expect(clientAddress(request("10.0.0.1", "1.2.3.4, garbage"), proxies)).toBe("10.0.0.1");
  });

  it("counts IPv6 by its /64", () => {
    expect(addressBucket("2001:db8:aa:bb:1::9")).toBe("2001:db8:aa:bb::/64");
    expect(addressBucket("2001:db8:aa:bb:ffff::1")).toBe(addressBucket("2001:db8:aa:bb::2"));
    expect(addressBucket("2001:db8::1")).toBe("2001:db8::/64");
    expect(addressBucket("192.0.2.1")).toBe("192.0.2.1");
  });
});
