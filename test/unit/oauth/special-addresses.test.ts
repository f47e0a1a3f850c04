import { describe, expect, it } from "vitest";
import { isSpecialUse } from "../../../src/oauth/special-addresses.js";

describe("special-use addresses (never dialled for a client)", () => {
  it("refuses every special-use IPv4 range and IPv6 range, in every spelling", () => {
    for (const address of [
      "127.0.0.1", "127.255.0.9", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
      "192.0.2.2", "198.51.100.7", "203.0.113.9", "224.0.0.1", "255.255.255.255",
      "::1", "::", "fd00::1", "fc00::2", "fe80::1", "ff02::1", "2001:db8::1",
      "100::1", "5f00::1", "3fff::1", "64:ff9b:1::1", "192.31.196.1", "192.52.193.9",
      "::ffff:127.0.0.1", "::ffff:7f00:1", "::FFFF:169.254.169.254", "64:ff9b::7f00:1", "64:ff9b::10.0.0.1", "2002:7f00:1::1", "2001::1", "::127.0.0.1",
      "not-an-address", "",
    ]) expect([address, isSpecialUse(address)]).toEqual([address, true]);
  });

  it("lets public addresses through, and public IPv4 carried in IPv6", () => {
    for (const address of ["104.18.32.47", "8.8.8.8", "2606:4700::6812:202f", "::ffff:104.18.32.47", "64:ff9b::8.8.8.8", "2002:0808:0808::1"]) {
      expect([address, isSpecialUse(address)]).toEqual([address, false]);
    }
  });
});
