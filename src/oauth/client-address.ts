import type { IncomingMessage } from "node:http";
import { type BlockList, isIP, isIPv4, isIPv6 } from "node:net";
import ipaddr from "ipaddr.js";

/** An address as the block lists and the limits read it: IPv4-mapped IPv6 as plain IPv4. */
function plain(address: string): string {
  const trimmed = address.trim().replace(/^\[|\]$/g, "");
  return isIP(trimmed) === 0 ? trimmed : ipaddr.process(trimmed).toString();
}

function trusted(proxies: BlockList, address: string): boolean {
  if (isIPv4(address)) return proxies.check(address, "ipv4");
  return isIPv6(address) && proxies.check(address, "ipv6");
}

/** The /64 an IPv6 address lies in (one customer's network, which may rotate addresses at will), or an IPv4 address as it is. */
export function addressBucket(address: string): string {
  if (!isIPv6(address)) return address;
  const network = new ipaddr.IPv6([...ipaddr.IPv6.parse(address).parts.slice(0, 4), 0, 0, 0, 0]);
  return `${network.toString()}/64`;
}

/**
 * The client a request comes from, as the OAuth limits count it (docs/mcp-oauth.md#limits): the
 * TCP peer, unless that peer is one of `TRUSTED_PROXIES`; then the right-most `X-Forwarded-For`
 * hop that is not a trusted proxy (hops further left were written by the client itself and prove
 * nothing). A header from any other peer is ignored. IPv6 addresses count by their /64.
 */
export function clientAddress(request: IncomingMessage, proxies: BlockList | undefined): string {
  let address = plain(request.socket.remoteAddress ?? "unknown");
  if (proxies && trusted(proxies, address)) {
    const header = request.headers["x-forwarded-for"];
    const hops = (Array.isArray(header) ? header.join(",") : header ?? "").split(",").map(plain).filter(Boolean);
    for (let index = hops.length - 1; index >= 0; index--) {
      const hop = hops[index] as string;
      if (!isIPv4(hop) && !isIPv6(hop)) break; // a hop that is no address: the chain cannot be read past it
      address = hop;
      if (!trusted(proxies, hop)) break;
    }
  }
  return addressBucket(address);
}
