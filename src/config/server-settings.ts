import { z } from "zod";
import { documented, integer, listOf, optionalHttpUrl } from "./variables.js";

/** The server section's variables: where the adapter listens, how it is reached, how it stops. */
export const serverVariables = z.object({
  PORT: documented(integer(8080, 0, 65535), "Port to listen on"),
  HOST: documented(z.string().min(1).default("127.0.0.1"), "Address to listen on (`0.0.0.0` in a container)"),
  PUBLIC_URL: documented(optionalHttpUrl, "The adapter's address as browsers reach it, for links to its own pages", "unset (the address it listens on)"),
  CORS_ORIGINS: documented(z.string().default(""), "Comma-separated browser origins allowed to call the adapter; `*` for any", "unset (CORS off)"),
  PLAYGROUND: documented(z.enum(["auto", "on", "off"]).default("auto"), "The playground page at `/`: `auto` serves it with the embedded workspace only"),
  SHUTDOWN_GRACE_MS: documented(integer(10_000, 0), "After SIGTERM/SIGINT, time in-flight requests get before open streams are ended"),
  SERVER_HEADERS_TIMEOUT_MS: documented(integer(10_000, 100), "A client must send its request headers within this time"),
  SERVER_REQUEST_TIMEOUT_MS: documented(integer(30_000, 100), "A client must send its whole request within this time (the answer's stream is not bounded)"),
});

/** The server section's variables as validated. */
export type ServerVariables = z.output<typeof serverVariables>;

/** The server section as the adapter reads it (`config.server`); `embedded`: no upstream is configured. */
export function serverSettings(env: ServerVariables, embedded: boolean) {
  return {
    port: env.PORT,
    host: env.HOST,
    /** The adapter's address as browsers reach it, without a trailing slash. */
    publicUrl: env.PUBLIC_URL?.replace(/\/+$/, ""),
    corsOrigins: listOf(env.CORS_ORIGINS),
    /** Whether `/` serves the playground. */
    playground: env.PLAYGROUND === "on" || (env.PLAYGROUND === "auto" && embedded),
    shutdownGraceMs: env.SHUTDOWN_GRACE_MS,
    headersTimeoutMs: env.SERVER_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: env.SERVER_REQUEST_TIMEOUT_MS,
  };
}

/** Where the adapter listens, how browsers reach it, how it stops (`PORT`, `HOST`, `PUBLIC_URL`, `SERVER_*`…). */
export type ServerSettings = ReturnType<typeof serverSettings>;
