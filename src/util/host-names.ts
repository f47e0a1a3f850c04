// Host names as the edge and the realtime client compare them (docs/operating.md#a-local-workspace-stays-local).

/** Whether a host name (lower-case, IPv6 without brackets) is the loopback interface: `localhost`, `::1`, 127.0.0.0/8. */
export function isLoopbackName(host: string): boolean {
  return host === "localhost" || host === "::1" || isLoopbackIpv4(host);
}

/** Whether `host` is an IPv4 address in 127.0.0.0/8, written as four decimal parts. */
function isLoopbackIpv4(host: string): boolean {
  const parts = host.split(".");
  return parts.length === 4 && parts[0] === "127" && parts.every((part) => /^\d{1,3}$/.test(part) && Number(part) <= 255);
}

/** Whether a host name matches an entry of a list: the same name, or a subdomain of `*.domain` (never the domain itself). */
export function hostMatches(host: string, entry: string): boolean {
  if (entry.startsWith("*.")) return host.length > entry.length - 1 && host.endsWith(entry.slice(1));
  return host === entry;
}

/**
 * The host name of a `Host` header (`name[:port]`, `[v6][:port]`), lower-case, IPv6 without its
 * brackets; undefined for one that is not of that form (a path, user info, a second port).
 */
export function hostNameOf(hostHeader: string): string | undefined {
  const match = /^(?:\[([0-9a-f:.]+)\]|([a-z0-9_.-]+))(?::\d{1,5})?$/i.exec(hostHeader);
  if (!match) return undefined;
  return (match[1] ?? match[2] ?? "").toLowerCase();
}
