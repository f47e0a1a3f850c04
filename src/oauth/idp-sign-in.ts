import { createHash, randomBytes } from "node:crypto";
import { createRemoteJWKSet, type JWTPayload, jwtVerify } from "jose";
import type { IdpSettings, SignInAllowList } from "../config/config.js";
import type { Clock } from "../util/clock.js";
import type { SecretBox } from "./secret-box.js";

/** Thrown when a sign-in at the identity provider cannot be completed; its message is shown on the page. */
export class SignInError extends Error {}

/** Who signed in, for which pending authorization. */
export interface SignedIn {
  uid: string;
  /** `<issuer> <sub>`. */
  subject: string;
  /** The person's groups (the groups claim), for the groups-to-workspaces mapping. */
  groups: string[];
}

interface IdpMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  authorization_response_iss_parameter_supported?: boolean;
}

/** The provider's metadata and its keys, as discovery found them. */
interface Discovered {
  document: IdpMetadata;
  keys: ReturnType<typeof createRemoteJWKSet>;
}

/** What a started sign-in remembers (sealed into a cookie): the authorization it belongs to and its one-time values. */
interface PendingSignIn {
  uid: string;
  state: string;
  nonce: string;
  verifier: string;
}

/** ID tokens are signed with the provider's asymmetric keys: never HMAC (`HS*`) or `none`. */
const ID_TOKEN_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"];
/** How long the provider's discovery document is kept before it is read again. */
const DISCOVERY_TTL_MS = 3600_000;

/** Whether a verified ID token's person is on the allow-list (docs/mcp-oauth.md#team-set-up); their groups. */
export function allowedPerson(payload: JWTPayload, allow: SignInAllowList): { allowed: boolean; groups: string[] } {
  const claim = payload[allow.groupsClaim];
  const groups = Array.isArray(claim) ? claim.filter((group): group is string => typeof group === "string") : typeof claim === "string" ? [claim] : [];
  const email = typeof payload.email === "string" ? payload.email.toLowerCase() : "";
  const domain = email.includes("@") ? email.slice(email.lastIndexOf("@") + 1) : "";
  const byEmail = payload.email_verified === true && domain !== "" && allow.emailDomains.includes(domain);
  const byGroup = groups.some((group) => allow.groups.includes(group));
  const bySubject = typeof payload.sub === "string" && allow.subjects.includes(payload.sub);
  return { allowed: byEmail || byGroup || bySubject, groups };
}

/**
 * The team set-up's sign-in (docs/mcp-oauth.md#team-set-up): the consent page sends the user to
 * the organisation's OpenID Connect provider (authorization code, PKCE S256, state and nonce,
 * found by discovery), and takes back who signed in from a verified ID token: signed by the
 * provider's keys with an asymmetric algorithm, the configured issuer exactly, this client as
 * audience (and as `azp` when there are several), `exp`, `iat` and `sub` present, not expired, the
 * nonce; then the allow-list. The one-time values travel sealed in a cookie bound to the pending
 * authorization; nothing is stored.
 */
export class IdpSignIn {
  private metadata: { at: number; found: Promise<Discovered> } | undefined;

  constructor(
    private readonly settings: IdpSettings,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {}

  private discover() {
    const now = this.clock.now();
    if (this.metadata && now - this.metadata.at < DISCOVERY_TTL_MS) return this.metadata.found;
    const found = (async () => {
      // OpenID Connect Discovery §4: a terminating slash is removed before the well-known path is appended.
      const response = await fetch(`${this.settings.issuer.replace(/\/$/, "")}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(5000) });
      if (!response.ok) throw new SignInError(`The identity provider's discovery answered ${response.status}`);
      const document = (await response.json()) as IdpMetadata;
      if (document.issuer !== this.settings.issuer) throw new SignInError("The identity provider's metadata names another issuer");
      return { document, keys: createRemoteJWKSet(new URL(document.jwks_uri)) };
    })();
    this.metadata = { at: now, found };
    found.catch(() => {
      if (this.metadata?.found === found) this.metadata = undefined;
    });
    return found;
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
      scope: this.settings.scopes,
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: createHash("sha256").update(pending.verifier).digest("base64url"),
      code_challenge_method: "S256",
    };
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return { url: url.href, sealed: this.box.seal(JSON.stringify(pending), "idp-sign-in") };
  }

  /** The ID token of a code, from the provider's token endpoint. */
  private async idToken(document: IdpMetadata, code: string, redirectUri: string, verifier: string): Promise<string> {
    const body = new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirectUri, code_verifier: verifier });
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
    return tokens.id_token;
  }

  /** Completes a sign-in from the provider's redirect: the pending authorization's id, who signed in (`<issuer> <sub>`) and their groups. */
  async finish(params: URLSearchParams, sealed: string | undefined, redirectUri: string): Promise<SignedIn> {
    const opened = sealed ? this.box.open(sealed, "idp-sign-in") : undefined;
    if (!opened) throw new SignInError("This sign-in did not start in this browser, or it expired: start again from the application");
    const pending = JSON.parse(opened) as PendingSignIn;
    if (params.get("state") !== pending.state) throw new SignInError("The sign-in's state does not match: start again from the application");
    const error = params.get("error");
    if (error) throw new SignInError(`The identity provider refused the sign-in (${error})`);
    const { document, keys } = await this.discover();
    const iss = params.get("iss");
    if (iss !== null ? iss !== document.issuer : document.authorization_response_iss_parameter_supported === true) {
      throw new SignInError("The sign-in came back from another issuer");
    }
    const code = params.get("code");
    if (!code) throw new SignInError("The identity provider sent no code");
    const idToken = await this.idToken(document, code, redirectUri, pending.verifier);
    const expected = {
      issuer: document.issuer,
      audience: this.settings.clientId,
      algorithms: ID_TOKEN_ALGORITHMS,
      requiredClaims: ["exp", "iat", "sub"],
      currentDate: new Date(this.clock.now()),
    };
    const { payload } = await jwtVerify(idToken, keys, expected).catch(() => {
      throw new SignInError("The identity provider's ID token did not verify");
    });
    const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
    const azp = (payload as { azp?: unknown }).azp;
    if ((audiences.length > 1 || azp !== undefined) && azp !== this.settings.clientId) throw new SignInError("The ID token was issued to another party (azp)");
    if (payload.nonce !== pending.nonce || typeof payload.sub !== "string") throw new SignInError("The ID token does not belong to this sign-in");
    const person = allowedPerson(payload, this.settings.allow);
    if (!person.allowed) throw new SignInError("You signed in, but this adapter's allow-list does not include you: ask its operator for access");
    return { uid: pending.uid, subject: `${document.issuer} ${payload.sub}`, groups: person.groups };
  }
}
