import { createHash, randomBytes } from "node:crypto";
import { createRemoteJWKSet, jwtVerify } from "jose";
import type { IdpSettings } from "../config/config.js";
import type { SecretBox } from "./secret-box.js";

/** Thrown when a sign-in at the identity provider cannot be completed; its message is shown on the page. */
export class SignInError extends Error {}

/** Who signed in, for which pending authorization. */
export interface SignedIn {
  uid: string;
  /** `<issuer> <sub>`. */
  subject: string;
}

interface IdpMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
}

/** What a started sign-in remembers (sealed into a cookie): the authorization it belongs to and its one-time values. */
interface PendingSignIn {
  uid: string;
  state: string;
  nonce: string;
  verifier: string;
}

/**
 * The team set-up's sign-in (docs/mcp-oauth.md#team-set-up): the consent page sends the user to
 * the organisation's OpenID Connect provider (authorization code, PKCE S256, state and nonce,
 * found by discovery), and takes back who signed in from a verified ID token (signature by the
 * provider's keys, issuer, audience, expiry, nonce). The one-time values travel sealed in a
 * cookie bound to the pending authorization; nothing is stored.
 */
export class IdpSignIn {
  private metadata: Promise<{ document: IdpMetadata; keys: ReturnType<typeof createRemoteJWKSet> }> | undefined;

  constructor(
    private readonly settings: IdpSettings,
    private readonly box: SecretBox,
  ) {}

  private discover() {
    this.metadata ??= (async () => {
      const response = await fetch(`${this.settings.issuer}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(5000) });
      if (!response.ok) throw new SignInError(`The identity provider's discovery answered ${response.status}`);
      const document = (await response.json()) as IdpMetadata;
      if (document.issuer !== this.settings.issuer) throw new SignInError("The identity provider's metadata names another issuer");
      return { document, keys: createRemoteJWKSet(new URL(document.jwks_uri)) };
    })();
    this.metadata.catch(() => {
      this.metadata = undefined;
    });
    return this.metadata;
  }

  /** Starts a sign-in for a pending authorization: the provider's URL to send the browser to, and the sealed cookie value to set. */
  async start(uid: string, redirectUri: string): Promise<{ url: string; sealed: string }> {
    const { document } = await this.discover();
    const random = (bytes: number) => randomBytes(bytes).toString("base64url");
    const pending: PendingSignIn = { uid, state: random(16), nonce: random(16), verifier: random(32) };
    const url = new URL(document.authorization_endpoint);
    const params = {
      response_type: "code",
      client_id: this.settings.clientId,
      redirect_uri: redirectUri,
      scope: "openid",
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: createHash("sha256").update(pending.verifier).digest("base64url"),
      code_challenge_method: "S256",
    };
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return { url: url.href, sealed: this.box.seal(JSON.stringify(pending), "idp-sign-in") };
  }

  /** Completes a sign-in from the provider's redirect: the pending authorization's id and who signed in (`<issuer> <sub>`). */
  async finish(params: URLSearchParams, sealed: string | undefined, redirectUri: string): Promise<SignedIn> {
    const opened = sealed ? this.box.open(sealed, "idp-sign-in") : undefined;
    if (!opened) throw new SignInError("This sign-in did not start in this browser, or it expired: start again from the application");
    const pending = JSON.parse(opened) as PendingSignIn;
    if (params.get("state") !== pending.state) throw new SignInError("The sign-in's state does not match: start again from the application");
    const error = params.get("error");
    if (error) throw new SignInError(`The identity provider refused the sign-in (${error})`);
    const { document, keys } = await this.discover();
    const iss = params.get("iss");
    if (iss !== null && iss !== document.issuer) throw new SignInError("The sign-in came back from another issuer");
    const code = params.get("code");
    if (!code) throw new SignInError("The identity provider sent no code");
    const body = new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirectUri, code_verifier: pending.verifier });
    const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", accept: "application/json" };
    if (this.settings.clientSecret) {
      const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, "+");
      const pair = `${encode(this.settings.clientId)}:${encode(this.settings.clientSecret)}`;
      headers.authorization = `Basic ${Buffer.from(pair).toString("base64")}`;
    } else {
      body.set("client_id", this.settings.clientId);
    }
    const response = await fetch(document.token_endpoint, { method: "POST", headers, body, signal: AbortSignal.timeout(5000) });
    const tokens = (await response.json().catch(() => ({}))) as { id_token?: string; error?: string };
    if (!response.ok || !tokens.id_token) throw new SignInError(`The identity provider did not give an ID token (${tokens.error ?? response.status})`);
    const expected = { issuer: document.issuer, audience: this.settings.clientId };
    const { payload } = await jwtVerify(tokens.id_token, keys, expected).catch(() => {
      throw new SignInError("The identity provider's ID token did not verify");
    });
    if (payload.nonce !== pending.nonce || typeof payload.sub !== "string") throw new SignInError("The ID token does not belong to this sign-in");
    return { uid: pending.uid, subject: `${document.issuer} ${payload.sub}` };
  }
}
