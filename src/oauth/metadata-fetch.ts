import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { Agent, buildConnector, fetch as undiciFetch } from "undici";
import { isSpecialUse } from "./special-addresses.js";

/** A fetch as oidc-provider calls it (the WHATWG signature; the library adds a `dispatcher` of its own, which is replaced). */
export type OAuthFetch = (url: string | URL, options: RequestInit & { dispatcher?: unknown }) => Promise<Response>;

/** Where a host is reached: its addresses (and, only for a test's stand-in server, another port). */
export type Resolve = (hostname: string, port: number) => Promise<{ address: string; port?: number }[]>;

/** What the metadata-document fetch is built from; production sets none of it. */
export interface MetadataFetchOptions {
  /** Name resolution (the system resolver, every address of the name). */
  resolve?: Resolve | undefined;
  /** Certificate authorities trusted instead of Node's bundle (a test's own CA). */
  ca?: string | Buffer | undefined;
  /**
   * Addresses the special-use check lets through: none in production. Only a test whose stand-in
   * server can live on loopback alone (this machine has no public address) names one.
   */
  allowedAddresses?: readonly string[] | undefined;
  /** Bound on connecting, TLS included (2.5 s, the library's bound on the whole fetch). */
  connectTimeoutMs?: number | undefined;
}

/** Thrown when a fetch would reach a special-use address: nothing was dialled. */
export class RefusedAddressError extends Error {}

const systemResolve: Resolve = async (hostname) => lookup(hostname, { all: true, verbatim: true });

/**
 * The one fetch the authorization server uses for client ID metadata documents (docs/mcp-oauth.md#client-id-metadata-documents):
 * npm undici's own `fetch` with an `Agent` of its own (Node's built-in fetch cannot drive an npm
 * undici 8 dispatcher: every request fails with "invalid onRequestStart method"). Its connector
 * resolves the name itself, refuses the connection when any address is special-use (private,
 * loopback, link-local, …, in every form: IPv4-mapped, NAT64, 6to4, decimal or octal literals,
 * which the URL parser has already made dotted), and dials the address it checked, with TLS
 * verified against the name: a name that resolves elsewhere a second time (DNS rebinding) changes
 * nothing. A refused fetch opens no connection at all.
 */
export function createMetadataFetch(options: MetadataFetchOptions = {}): { fetch: OAuthFetch; close(): Promise<void> } {
  const resolve = options.resolve ?? systemResolve;
  const allowed = new Set(options.allowedAddresses ?? []);
  const timeout = options.connectTimeoutMs ?? 2500;
  const tls = buildConnector({ timeout, allowH2: false, ...(options.ca ? { ca: options.ca } : {}) });
  const agent = new Agent({
    connections: 4,
    pipelining: 1,
    connect: (connectOptions, callback) => {
      const { hostname, protocol } = connectOptions;
      const port = Number(connectOptions.port) || (protocol === "https:" ? 443 : 80);
      const name = hostname.replace(/^\[|\]$/g, "");
      const literal = isIP(name) !== 0;
      (literal ? Promise.resolve([{ address: name }]) : resolve(name, port))
        .then((found) => {
          if (found.length === 0) throw new RefusedAddressError(`${name} does not resolve`);
          const refused = found.find(({ address }) => isSpecialUse(address) && !allowed.has(address));
          if (refused) throw new RefusedAddressError(`${name} resolves to a special-use address (${refused.address}): not fetched`);
          const target = found[0] as { address: string; port?: number };
          const servername = literal ? undefined : name;
          const dial = { ...connectOptions, hostname: target.address, port: String(target.port ?? port), servername };
          tls(dial as buildConnector.Options, callback);
        })
        .catch((error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), null));
    },
  });
  return {
    fetch: (url, init) => {
      const { dispatcher: _theirs, ...rest } = init;
      return undiciFetch(url, { ...(rest as object), dispatcher: agent }) as unknown as Promise<Response>;
    },
    close: () => agent.close(),
  };
}
