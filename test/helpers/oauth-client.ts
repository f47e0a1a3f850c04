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
