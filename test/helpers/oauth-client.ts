import { createHash, randomBytes } from "node:crypto";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthClientProvider, OAuthTokens } from "@modelcontextprotocol/client";

/** The redirect URI the tests' OAuth clients register (a loopback callback nobody listens on: the tests read the redirect). */
export const REDIRECT_URI = "http://127.0.0.1:8976/callback";

/**
 * An MCP SDK OAuth client provider that keeps everything in memory and, instead of opening a
 * browser, records the authorization URL the SDK sends the user to.
 */
export class MemoryOAuthClient implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = "";
  authorizationUrl: URL | undefined;

  constructor(
    private readonly metadata: Partial<OAuthClientMetadata> = {},
    readonly clientMetadataUrl?: string,
  ) {}

  get redirectUrl(): string {
    return REDIRECT_URI;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "Adapter test client",
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      ...this.metadata,
    } as OAuthClientMetadata;
  }

  clientInformation() {
    return this.information;
  }

  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }

  tokens() {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }

  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }

  codeVerifier() {
    return this.verifier;
  }
}

/** A minimal cookie jar and redirect follower: what a browser does between the authorization URL and the consent form. */
export class FormBrowser {
  private readonly cookies = new Map<string, string>();

  private remember(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const equals = pair.indexOf("=");
      const name = pair.slice(0, equals).trim();
      const value = pair.slice(equals + 1).trim();
      if (/max-age=0/i.test(line) || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  /** One request with the jar's cookies, no redirect followed. */
  async request(url: string | URL, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) headers.set("cookie", [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; "));
    const response = await fetch(url, { ...init, headers, redirect: "manual" });
    this.remember(response);
    return response;
  }

  /** Follows redirects from `url` until a page (not a redirect) or a URL outside `origin`: that URL, or the page. */
  async follow(url: string | URL, origin: string, init: RequestInit = {}): Promise<{ page: Response; url: string } | { left: URL }> {
    let next = new URL(url);
    let response = await this.request(next, init);
    for (let hops = 0; hops < 10 && response.status >= 300 && response.status < 400; hops++) {
      next = new URL(response.headers.get("location") ?? "", next);
      if (next.origin !== origin) return { left: next };
      response = await this.request(next);
    }
    return { page: response, url: next.href };
  }

  /** Submits the page's form with these fields (plus its hidden ones), following redirects. */
  async submit(pageUrl: string, html: string, origin: string, fields: Record<string, string>) {
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1]?.replace(/&#38;/g, "&");
    if (!action) throw new Error(`no form on the page: ${html.slice(0, 500)}`);
    const body = new URLSearchParams();
    for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) body.set(name as string, decodeEntities(value as string));
    for (const [name, value] of Object.entries(fields)) body.set(name, value);
    return this.follow(new URL(action, pageUrl), origin, { method: "POST", body, headers: { "content-type": "application/x-www-form-urlencoded" } });
  }
}

function decodeEntities(text: string): string {
  return text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
}

/**
 * The whole consent in a form-only browser: from the authorization URL, type `key`, pick
 * `workspace`, allow; the callback URL the browser is sent back to (with `code`, `state`, `iss`).
 */
export async function consent(authorizationUrl: URL, key: string, workspace: string): Promise<URL> {
  const browser = new FormBrowser();
  const origin = authorizationUrl.origin;
  const first = await browser.follow(authorizationUrl, origin);
  if ("left" in first) return first.left;
  const keyStep = await browser.submit(first.url, await first.page.text(), origin, { key, action: "continue" });
  if ("left" in keyStep) return keyStep.left;
  const chosen = await browser.submit(keyStep.url, await keyStep.page.text(), origin, { workspace, action: "allow" });
  if ("left" in chosen) return chosen.left;
  const html = await chosen.page.text();
  throw new Error(`consent ended on a page (${chosen.page.status}): ${/role="alert">([^<]*)/.exec(html)?.[1] ?? html.slice(-1500)}`);
}

/** A PKCE pair (S256). */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** One OAuth client driven by hand against an adapter: registration, authorization, tokens, revocation. */
export class HandDrivenClient {
  clientId = "";
  readonly browser = new FormBrowser();

  /** The resource tokens are asked for: `<base>/oauth/mcp` unless the adapter has a PUBLIC_URL of its own. */
  readonly resource: string;

  constructor(
    readonly base: string,
    readonly redirectUri = REDIRECT_URI,
    resource?: string,
  ) {
    this.resource = resource ?? `${base}/oauth/mcp`;
  }

  /** Dynamic client registration (RFC 7591). */
  async register(metadata: Record<string, unknown> = {}): Promise<this> {
    const response = await fetch(`${this.base}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Hand-driven client", redirect_uris: [this.redirectUri], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"], ...metadata }),
    });
    if (response.status !== 201) throw new Error(`registration: ${response.status} ${await response.text()}`);
    this.clientId = ((await response.json()) as { client_id: string }).client_id;
    return this;
  }

  /** The authorization URL (PKCE S256, the resource, offline access), with any parameter replaced or removed (undefined). */
  authorizationUrl(challenge: string, overrides: Record<string, string | undefined> = {}): URL {
    const url = new URL(`${this.base}/oauth/authorize`);
    const params: Record<string, string | undefined> = {
      response_type: "code",
      client_id: this.clientId,
      redirect_uri: this.redirectUri,
      code_challenge: challenge,
      code_challenge_method: "S256",
      resource: this.resource,
      scope: "workspace offline_access",
      state: "state-1",
      ...overrides,
    };
    for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
    return url;
  }

  /** Opens an authorization URL: the consent page (its URL and HTML), or where the server sent the browser instead. */
  async open(url: URL): Promise<{ pageUrl: string; html: string; status: number } | { left: URL }> {
    const opened = await this.browser.follow(url, this.base);
    if ("left" in opened) return opened;
    return { pageUrl: opened.url, html: await opened.page.text(), status: opened.page.status };
  }

  /** Authorization with consent (key, then workspace): the callback URL. */
  async authorize(challenge: string, key: string, workspace = "acme", overrides: Record<string, string | undefined> = {}): Promise<URL> {
    return consent(this.authorizationUrl(challenge, overrides), key, workspace);
  }

  /** A token endpoint request: status and JSON body. */
  async token(params: Record<string, string>): Promise<{ status: number; body: Record<string, any> }> {
    const response = await fetch(`${this.base}/oauth/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ client_id: this.clientId, ...params }) });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  }

  /** The code exchanged for tokens. */
  exchange(code: string, verifier: string, extra: Record<string, string> = {}) {
    return this.token({ grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: this.redirectUri, resource: this.resource, ...extra });
  }

  refresh(refreshToken: string) {
    return this.token({ grant_type: "refresh_token", refresh_token: refreshToken, resource: this.resource });
  }

  /** RFC 7009 revocation: the status. */
  async revoke(token: string): Promise<number> {
    const response = await fetch(`${this.base}/oauth/revoke`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ client_id: this.clientId, token }) });
    return response.status;
  }

  /** A tools/call with this Authorization header: the status and body. */
  async callTool(authorization: string, params: Record<string, unknown>, url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
    const response = await fetch(url, {
      method: "POST",
      headers: { authorization, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18", ...headers },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params }),
    });
    return { status: response.status, body: await response.text() };
  }

  /** A tools/list over /oauth/mcp with this access token: the status and the WWW-Authenticate header. */
  async listTools(accessToken: string, url = `${this.base}/oauth/mcp`): Promise<{ status: number; challenge: string | null; body: string }> {
    const response = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${accessToken}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    return { status: response.status, challenge: response.headers.get("www-authenticate"), body: await response.text() };
  }

  /** The whole flow to tokens: access and refresh token. */
  async tokens(key: string, workspace = "acme"): Promise<{ access: string; refresh: string }> {
    const { verifier, challenge } = pkcePair();
    const callback = await this.authorize(challenge, key, workspace);
    const code = callback.searchParams.get("code");
    if (!code) throw new Error(`no code: ${callback.href}`);
    const exchanged = await this.exchange(code, verifier);
    if (exchanged.status !== 200) throw new Error(`token: ${exchanged.status} ${JSON.stringify(exchanged.body)}`);
    return { access: exchanged.body.access_token, refresh: exchanged.body.refresh_token };
  }
}
