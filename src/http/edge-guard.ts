import type { IncomingMessage } from "node:http";
import type { ServerSettings } from "../config/config.js";
import { type AdapterError, MisdirectedRequestError, PermissionDeniedError } from "../errors/adapter-error.js";
import { hostMatches, hostNameOf, isLoopbackName } from "../util/host-names.js";
import { originAllowed } from "./cors.js";

/** What the guard reads of the server section: the hosts answered, `PUBLIC_URL`, `CORS_ORIGINS`. */
export type GuardSettings = Pick<ServerSettings, "hosts" | "publicUrl" | "corsOrigins">;

/**
 * The edge's first check of every request (docs/operating.md#a-local-workspace-stays-local), before
 * CORS, admission or a route: the `Host` must be one the adapter answers to (with the embedded
 * workspace, or once `ALLOWED_HOSTS` is set; the probes `/health` and `/ready` are answered on any),
 * and a browser `Origin` on the routes that answer or read documents (`/v1`, `/documents`, `/mcp`,
 * `/oauth/mcp`) must be allowed (`CORS_ORIGINS`) or the adapter's own. Returns the refusal to
 * send, or undefined. A DNS-rebinding page reaches the adapter under the attacker's host name: the
 * `Host` check refuses it even where a browser sends no `Origin` (a same-origin GET).
 */
export function edgeGuard(settings: GuardSettings): (request: IncomingMessage, path: string) => AdapterError | undefined {
  // The last Host and Origin let through: nearly every request repeats them, and comparing a string
  // costs a few ns where parsing them again cost 0.8 µs (Host) and 2.8 µs (with an Origin) a request,
  // measured on a busy two-core machine. Only what passed is remembered; what it depends on is fixed.
  let answeredHost: string | undefined;
  let ownOrigin: { origin: string; host: string | undefined } | undefined;
  return (request, path) => {
    const { host, origin } = request.headers;
    if (settings.hosts.checked && host !== answeredHost && path !== "/health" && path !== "/ready") {
      const refused = hostRefusal(request, settings);
      if (refused) return refused;
      answeredHost = host;
    }
    if (origin === undefined || !guardsOrigin(path)) return undefined;
    if (origin === ownOrigin?.origin && host === ownOrigin.host) return undefined;
    const refused = originRefusal(request, settings);
    if (!refused) ownOrigin = { origin, host };
    return refused;
  };
}

/** The paths whose browser `Origin` is checked: those that answer, read documents or call tools. */
function guardsOrigin(path: string): boolean {
  return (
    path.startsWith("/v1/") ||
    path.startsWith("/documents/") ||
    path === "/mcp" ||
    path.startsWith("/mcp/") ||
    path === "/oauth/mcp"
  );
}

/** The 421 of a `Host` the adapter does not answer to, or undefined for one it does (or none: no browser omits it). */
export function hostRefusal(request: IncomingMessage, settings: Pick<GuardSettings, "hosts">): AdapterError | undefined {
  const { host } = request.headers;
  if (host === undefined || hostAnswered(host, settings.hosts.allowed)) return undefined;
  return new MisdirectedRequestError(
    `This adapter does not answer to the host ${JSON.stringify(host.slice(0, 100))}: it answers loopback names, PUBLIC_URL's host and the hosts of ALLOWED_HOSTS`,
  );
}

/** Whether a `Host` header names loopback (`localhost` and its subdomains, 127.0.0.0/8, `[::1]`, any port) or an allowed host. */
export function hostAnswered(host: string, allowed: readonly string[]): boolean {
  const name = hostNameOf(host);
  if (name === undefined) return false;
  return isLoopbackName(name) || name.endsWith(".localhost") || allowed.some((entry) => hostMatches(name, entry));
}

/** The 403 of a browser origin the deployment does not allow and that is not the adapter's own, or undefined. */
export function originRefusal(request: IncomingMessage, settings: GuardSettings): AdapterError | undefined {
  const { origin } = request.headers;
  if (origin === undefined || originAllowed(origin, settings.corsOrigins) || sameOrigin(request, origin, settings)) {
    return undefined;
  }
  return new PermissionDeniedError(
    `Origin '${origin.slice(0, 200)}' may not call this adapter; a deployment that serves browser clients lists their origins in CORS_ORIGINS`,
    { code: "origin_not_allowed" },
  );
}

/**
 * Whether a browser's `Origin` is the adapter's own: `PUBLIC_URL`'s origin when one is configured
 * (behind a proxy that rewrites the host), or exactly the scheme and host the request was sent to
 * (its own pages, e.g. the playground) when that host is loopback or listed (`ALLOWED_HOSTS`,
 * `PUBLIC_URL`'s host). A DNS-rebinding page has a foreign host in its `Origin`… and in its `Host`
 * too, when the attacker's name resolves to the adapter: matching the two proves nothing, so the
 * own origin counts only on a host the deployment names.
 */
export function sameOrigin(request: IncomingMessage, origin: string, settings: Pick<GuardSettings, "hosts" | "publicUrl">): boolean {
  if (settings.publicUrl !== undefined && originOf(settings.publicUrl) === origin) return true;
  const { host } = request.headers;
  if (host === undefined) return false;
  const scheme = (request.socket as { encrypted?: boolean }).encrypted ? "https" : "http";
  return origin === `${scheme}://${host}` && hostAnswered(host, settings.hosts.allowed);
}

/** The origin (`scheme://host[:port]`) of a URL, or undefined when it is not one. */
function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}
