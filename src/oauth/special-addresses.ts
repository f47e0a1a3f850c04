import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * The IPv4 address an IPv6 one reaches, when it carries one: IPv4-mapped (`::ffff:a.b.c.d`), NAT64's
 * well-known prefix (`64:ff9b::/96`) and 6to4 (`2002::/16`).
 */
function carriedV4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const [g0 = 0, g1 = 0, g2 = 0, , , , g6 = 0, g7 = 0] = address.parts;
  if (address.isIPv4MappedAddress()) return address.toIPv4Address();
  if (address.match(ipaddr.IPv6.parseCIDR("64:ff9b::/96"))) return new ipaddr.IPv4([g6 >> 8, g6 & 0xff, g7 >> 8, g7 & 0xff]);
  if (g0 === 0x2002) return new ipaddr.IPv4([g1 >> 8, g1 & 0xff, g2 >> 8, g2 & 0xff]);
  return undefined;
}

/**
 * Whether an address must never be dialled for a client (a client ID metadata document): anything
 * IANA's special-purpose registries name (private, loopback, link-local, shared, documentation,
 * benchmarking, multicast, reserved: every range but ipaddr.js's `unicast`), in every spelling Node
 * accepts. An IPv6 address that carries an IPv4 one is judged by it, and the deprecated
 * IPv4-compatible block (`::/96`) is refused whole. Anything that is not an IP address counts as
 * special: refused.
 */
export function isSpecialUse(address: string): boolean {
  if (isIP(address) === 0) return true;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv4") return parsed.range() !== "unicast";
  const v6 = parsed as ipaddr.IPv6;
  const carried = carriedV4(v6);
  if (carried) return carried.range() !== "unicast";
  if (v6.match(ipaddr.IPv6.parseCIDR("::/96"))) return true;
  return v6.range() !== "unicast";
}
