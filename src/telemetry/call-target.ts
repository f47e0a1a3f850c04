/** What an upstream call's span records of its URL: `url.full`, `server.address` and `server.port`, and the path its name carries. */
export interface CallUrl {
  readonly full: string;
  readonly hostname: string;
  readonly port: number;
  /** The path without the query string, as the URL parser normalizes it. */
  readonly pathname: string;
}

/**
 * A path (with its query string) that the WHATWG URL parser leaves as it is when resolved against
 * an http(s) base: it starts with one `/`, holds only characters no percent-encode set contains
 * (no `\`, which the parser reads as `/`), and has no dot segment (`.`, `..`, `%2e`), which it
 * would resolve.
 */
const PLAIN_PATH = /^\/(?!\/)[\w\-.~!$&()*+,;=:@/%]*(?:\?[\w\-.~!$&()*+,;=:@/%?]*)?$/;
const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?:[/?]|$)/i;

/** Paths whose URL is remembered at most (the client's fixed paths; list pages' cursors fill the rest once). */
const KNOWN_PATHS = 64;

/**
 * The workspace service's base URL, parsed once, for the spans of the calls made to it: a call's
 * URL is what `new URL(path, base)` gives, without parsing it again for the paths the parser
 * would leave as they are (every path the client makes); any other path is parsed. The URLs of
 * the first paths seen are remembered, so that `POST /queries` costs a look-up.
 */
export class CallTarget {
  /** The base's scheme, credentials, host and port: what precedes a path-absolute path in the resolved URL. */
  private readonly prefix: string;
  private readonly hostname: string;
  private readonly port: number;
  private readonly known = new Map<string, CallUrl>();

  constructor(private readonly base: URL) {
    this.prefix = new URL("/", base).href.slice(0, -1);
    this.hostname = base.hostname;
    this.port = portOf(base);
  }

  /** The URL of a call to `path` (and its query string), as the span records it. */
  url(path: string): CallUrl {
    const known = this.known.get(path);
    if (known) return known;
    const url = this.resolve(path);
    if (this.known.size < KNOWN_PATHS) this.known.set(path, url);
    return url;
  }

  private resolve(path: string): CallUrl {
    if (PLAIN_PATH.test(path) && !DOT_SEGMENT.test(path)) {
      const query = path.indexOf("?");
      const pathname = query < 0 ? path : path.slice(0, query);
      return { full: this.prefix + path, hostname: this.hostname, port: this.port, pathname };
    }
    const url = new URL(path, this.base);
    return { full: url.href, hostname: url.hostname, port: portOf(url), pathname: url.pathname };
  }
}

/** The URL's port, or its scheme's default. */
function portOf(url: URL): number {
  return Number(url.port || (url.protocol === "https:" ? 443 : 80));
}
