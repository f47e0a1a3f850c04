import { BlockList, isIPv4, isIPv6 } from "node:net";

/**
 * IANA's special-purpose address registries (IPv4 and IPv6): private, loopback, link-local,
 * shared, documentation, benchmarking, multicast, reserved. An outgoing fetch the adapter makes
 * on a client's say-so (a client ID metadata document) never reaches one of these.
 */
const SPECIAL_V4 = [
  "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
  "192.0.0.0/24", "192.0.2.0/24", "192.31.196.0/24", "192.52.193.0/24", "192.88.99.0/24", "192.168.0.0/16",
  "192.175.48.0/24", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
];
const SPECIAL_V6 = [
  "::/128", "::1/128", "::/96", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32",
  "3fff::/20", "5f00::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
];

function blockList(ranges: string[], family: "ipv4" | "ipv6"): BlockList {
  const list = new BlockList();
  for (const range of ranges) {
    const [network = "", bits = ""] = range.split("/");
    list.addSubnet(network, Number(bits), family);
  }
  return list;
}

/** The registries as block lists: built once per check (cheap, and no module-level state). */
function lists() {
  return { v4: blockList(SPECIAL_V4, "ipv4"), v6: blockList(SPECIAL_V6, "ipv6") };
}

/** An IPv6 address as its eight 16-bit groups (an embedded dotted IPv4 tail included). */
function groupsOf(address: string): number[] {
  let text = address.toLowerCase().replace(/%.*$/, "");
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const bytes = (dotted[1] as string).split(".").map(Number);
    text = `${text.slice(0, dotted.index)}${(((bytes[0] ?? 0) << 8) | (bytes[1] ?? 0)).toString(16)}:${(((bytes[2] ?? 0) << 8) | (bytes[3] ?? 0)).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const zeros = tail === undefined ? [] : new Array<string>(8 - left.length - right.length).fill("0");
  return [...left, ...zeros, ...right].map((group) => parseInt(group, 16));
}

const v4Of = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

/**
 * The IPv4 address an IPv6 one carries, when it is a form that reaches it: IPv4-mapped
 * (`::ffff:a.b.c.d`), NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`).
 */
function embeddedV4(groups: number[]): string | undefined {
  const [g0, g1, g2, g3, g4, g5, g6 = 0, g7 = 0] = groups;
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff) return v4Of(g6, g7);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return v4Of(g6, g7);
  if (g0 === 0x2002) return v4Of(g1 ?? 0, g2 ?? 0);
  return undefined;
}

/**
 * Whether an address must never be dialled for a client: special-use in either family, in every
 * spelling Node accepts (an IPv4-mapped, NAT64 or 6to4 address is judged by the IPv4 address it
 * carries). Anything that is not an IP address at all counts as special: refused.
 */
export function isSpecialUse(address: string): boolean {
  const { v4, v6 } = lists();
  if (isIPv4(address)) return v4.check(address, "ipv4");
  if (!isIPv6(address)) return true;
  const groups = groupsOf(address);
  if (groups.length !== 8 || groups.some((group) => !Number.isInteger(group))) return true;
  const carried = embeddedV4(groups);
  if (carried !== undefined) return v4.check(carried, "ipv4");
  const canonical = groups.map((group) => group.toString(16)).join(":");
  return v6.check(canonical, "ipv6");
}
