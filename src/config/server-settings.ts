import { z } from "zod";
import { documented, integer, issue, listOf, optionalHttpUrl } from "./variables.js";

/** An entry of `ALLOWED_HOSTS`: a host name or address, or `*.` and a domain; an IPv6 address in brackets. */
const HOST_ENTRY = /^(?:\*\.)?[a-z0-9_-]+(?:\.[a-z0-9_-]+)*$|^\[[0-9a-f:.]+\]$/;

/** The server section's variables: where the adapter listens, how it is reached, how it stops. */
export const serverVariables = z.object({
  PORT: documented(integer(8080, 0, 65535), "Port to listen on"),
  HOST: documented(z.string().min(1).default("127.0.0.1"), "Address to listen on (`0.0.0.0` in a container)"),
  PUBLIC_URL: documented(optionalHttpUrl, "The adapter's address as browsers reach it, for links to its own pages", "unset (the address it listens on)"),
  CORS_ORIGINS: documented(z.string().default(""), "Comma-separated browser origins allowed to call the adapter; `*` for any", "unset (CORS off)"),
  ALLOWED_HOSTS: documented(
    z.string().default(""),
    "Comma-separated host names (`*.example.com` for subdomains) the adapter answers to besides loopback names and `PUBLIC_URL`'s: with the embedded workspace, or once this is set, a request whose `Host` is another gets a 421 (against DNS rebinding: docs/operating.md#a-local-workspace-stays-local); pages served on these hosts count as the adapter's own origin",
    "unset (loopback and `PUBLIC_URL`'s host)",
  ),
  PLAYGROUND: documented(z.enum(["auto", "on", "off"]).default("auto"), "The playground page at `/`: `auto` serves it with the embedded workspace only"),
  SHUTDOWN_GRACE_MS: documented(integer(10_000, 0), "After SIGTERM/SIGINT, time in-flight requests get before open streams are ended"),
  SERVER_HEADERS_TIMEOUT_MS: documented(integer(10_000, 100), "A client must send its request headers within this time"),
  SERVER_REQUEST_TIMEOUT_MS: documented(integer(30_000, 100), "A client must send its whole request within this time (the answer's stream is not bounded)"),
});

/** The server section's variables as validated. */
export type ServerVariables = z.output<typeof serverVariables>;

/** The server section as the adapter reads it (`config.server`); `embedded`: no upstream is configured. */
export function serverSettings(env: ServerVariables, embedded: boolean, context: z.RefinementCtx) {
  const allowedHosts = listOf(env.ALLOWED_HOSTS).map((host) => host.toLowerCase());
  for (const host of allowedHosts) {
    if (!HOST_ENTRY.test(host)) issue(context, "ALLOWED_HOSTS", `'${host}' is not a host name (a name, an address, or *. and a domain; no scheme, port or path)`);
  }
  const publicUrl = env.PUBLIC_URL?.replace(/\/+$/, "");
  return {
    port: env.PORT,
    host: env.HOST,
    /** The adapter's address as browsers reach it, without a trailing slash. */
    publicUrl,
    corsOrigins: listOf(env.CORS_ORIGINS),
    /**
     * The `Host` values answered (docs/operating.md#a-local-workspace-stays-local): loopback names
     * always; these host names (`ALLOWED_HOSTS`, lower-case, `*.domain` for subdomains, and
     * `PUBLIC_URL`'s); `checked`: whether any other is refused (with the embedded workspace, or once
     * `ALLOWED_HOSTS` lists one).
     */
    hosts: {
      checked: embedded || allowedHosts.length > 0,
      allowed: [...allowedHosts, ...(publicUrl === undefined ? [] : [new URL(publicUrl).hostname.toLowerCase()])]
        .map(withoutBrackets),
    },
    /** Whether `/` serves the playground. */
    playground: env.PLAYGROUND === "on" || (env.PLAYGROUND === "auto" && embedded),
    shutdownGraceMs: env.SHUTDOWN_GRACE_MS,
    headersTimeoutMs: env.SERVER_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: env.SERVER_REQUEST_TIMEOUT_MS,
  };
}

/** A host name as a `Host` header's is compared: an IPv6 address without its brackets. */
function withoutBrackets(host: string): string {
  return host.replace(/^\[(.*)\]$/, "$1");
}

/** Where the adapter listens, how browsers reach it, how it stops (`PORT`, `HOST`, `PUBLIC_URL`, `SERVER_*`…). */
export type ServerSettings = ReturnType<typeof serverSettings>;
