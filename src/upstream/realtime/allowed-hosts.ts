import { hostMatches, isLoopbackName } from "../../util/host-names.js";

/**
 * Which `ws_url`s the adapter may follow (docs/upstream-assumptions.md#realtime): a query's answer
 * names the endpoint, so an unchecked one would let the upstream (or whoever forged its answer)
 * point the adapter at any host. Entries are host names (`realtime.example.com`), or `*.` and a
 * domain for its subdomains; by default only the upstream's own host.
 */
export interface HostPolicy {
  /** Host names and `*.domain` patterns, lower-case. */
  hosts: readonly string[];
  /** The upstream is `https` and off loopback: its channel must be `wss` too, or tokens travel in clear. */
  requireTls: boolean;
}

/** The policy for an upstream base URL and the configured list (empty: the upstream's host). */
export function hostPolicy(upstreamUrl: string, configured: readonly string[]): HostPolicy {
  const upstream = new URL(upstreamUrl);
  const own = hostnameOf(upstream);
  return {
    hosts: (configured.length > 0 ? configured : [own]).map((host) => host.trim().toLowerCase()).filter(Boolean),
    requireTls: upstream.protocol === "https:" && !isLoopbackName(own),
  };
}

/** Why a `ws_url` may not be followed, or null when it may. */
export function refusalOf(wsUrl: string, policy: HostPolicy): string | null {
  let url: URL;
  try {
    url = new URL(wsUrl);
  } catch {
    return "not a URL";
  }
  if (url.protocol !== "ws:" && url.protocol !== "wss:") return `scheme ${url.protocol} is not ws: or wss:`;
  const host = hostnameOf(url);
  if (!policy.hosts.some((allowed) => hostMatches(host, allowed))) return "host not in REALTIME_ALLOWED_HOSTS";
  if (policy.requireTls && url.protocol !== "wss:" && !isLoopbackName(host)) return "wss: required for an https upstream";
  return null;
}

/** The part of a `ws_url` that may be logged: scheme, host and port, never the path or query (which may carry tokens). */
export function originOf(wsUrl: string): string {
  try {
    const url = new URL(wsUrl);
    return `${url.protocol}//${url.host}`;
  } catch {
    return "(not a URL)";
  }
}

function hostnameOf(url: URL): string {
  return url.hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1");
}
