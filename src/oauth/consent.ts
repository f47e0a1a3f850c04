import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { credentialHash } from "../auth/credential-hash.js";
import type { SignInAllowList } from "../config/config.js";
import { AdapterError } from "../errors/adapter-error.js";
import type { WorkspaceClient } from "../upstream/workspace-client.js";
import { countKeyTry, type OAuthAttemptLimits, retryAfterSeconds } from "./attempt-limits.js";
import type { AuthorizationServer, PendingAuthorization } from "./authorization-server.js";
import { cookiesOf, readForm, send } from "./consent-http.js";
import { type ConsentView, consentPage, errorPage } from "./consent-page.js";
import type { GrantKeys } from "./grant-keys.js";
import { type IdpSignIn, SignInError } from "./idp-sign-in.js";
import type { SecretBox } from "./secret-box.js";

/** What the consent step is built from. */
export interface ConsentOptions {
  box: SecretBox;
  grants: GrantKeys;
  client: Pick<WorkspaceClient, "listWorkspaces">;
  logger: Logger;
  /** Pages of the key's workspace list read to offer and check a choice (100 ids a page). */
  maxPages?: number;
  /** The team set-up: the deployment's key, and the identity provider people sign in at instead of typing a key. */
  team?: { key: string; signIn: IdpSignIn; issuer: string; allow: SignInAllowList } | undefined;
  /** The limits on wrong keys (per client address and per authorization). */
  attempts: OAuthAttemptLimits;
  /** Whether a typed key is an admin's or the metrics scraper's: refused, never sent to the workspace. */
  reservedKey?: ((key: string) => boolean) | undefined;
}

/** The longest workspace key accepted at consent: a longer one is refused without asking the workspace. */
export const MAX_KEY_LENGTH = 256;

/** Whether an error means the store did not answer (a 503): the page says to try again, never a 500. */
const storeDown = (error: unknown) => (error as { status?: unknown } | undefined)?.status === 503;

/**
 * The consent page of a pending authorization (`/oauth/interaction/{uid}`): the user types their
 * workspace key (a password field), picks one of the workspaces that key can list, and allows or
 * denies. The key is checked against the workspace before any code is issued, kept between the two
 * steps only sealed to this authorization, and stored sealed to the grant. CSRF: a random value in
 * a `__Host-`, SameSite=Strict cookie (plain name on loopback http) whose HMAC with the
 * authorization's id the form must carry; a finished authorization cannot be submitted again.
 */
export function consentStep(server: AuthorizationServer, options: ConsentOptions) {
  const { box, grants } = options;
  const secure = server.addresses.origin.startsWith("https:");
  const csrfCookie = secure ? "__Host-oauth_csrf" : "oauth_csrf";
  const idpCookie = secure ? "__Host-oauth_idp" : "oauth_idp";
  const signedInCookie = secure ? "__Host-oauth_signed_in" : "oauth_signed_in";
  const callbackUri = `${server.addresses.issuer}/idp/callback`;
  // Lax: the identity provider's redirect back is a top-level navigation from another site.
  const laxCookie = (name: string, value: string) => `${name}=${value}; Path=/; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}${value ? "" : "; Max-Age=0"}`;

  /** Who signed in at the identity provider for this authorization (team set-up), if anyone, and their groups. */
  function signedIn(request: IncomingMessage, uid: string): { subject: string; groups: string[] } | undefined {
    const sealed = cookiesOf(request).get(signedInCookie);
    const opened = sealed ? box.open(sealed, "signed-in") : undefined;
    if (!opened) return undefined;
    const record = JSON.parse(opened) as { uid: string; subject: string; groups?: string[] };
    return record.uid === uid ? { subject: record.subject, groups: record.groups ?? [] } : undefined;
  }

  /** The workspaces a signed-in person may pick: the deployment key's, narrowed to their groups' when groups map to workspaces. */
  async function teamWorkspaces(groups: string[]): Promise<string[]> {
    const team = options.team as NonNullable<ConsentOptions["team"]>;
    const listed = (await workspacesOf(team.key)) ?? [];
    const mapping = team.allow.groupWorkspaces;
    if (!mapping) return listed;
    const mine = new Set(groups.flatMap((group) => mapping[group] ?? []));
    return listed.filter((workspace) => mine.has(workspace));
  }

  /** The team set-up's step: sign in first, then pick one of the workspaces this person may use. */
  async function teamStep(request: IncomingMessage, found: PendingAuthorization): Promise<ConsentView["step"]> {
    const team = options.team as NonNullable<ConsentOptions["team"]>;
    const person = signedIn(request, found.uid);
    if (!person) return { kind: "sign-in", issuer: team.issuer };
    return { kind: "workspace", workspaces: await teamWorkspaces(person.groups) };
  }
  const maxPages = options.maxPages ?? 5;

  /** The pending authorization, or an error page sent (expired, finished, another browser's). */
  async function pending(
    request: IncomingMessage,
    response: ServerResponse,
    uid: string,
  ): Promise<PendingAuthorization | undefined> {
    try {
      const found = await server.interaction(request, response);
      if (found.uid === uid) return found;
    } catch (error) {
      if (!server.isSessionError(error)) throw error;
    }
    send(response, 400, errorPage("This sign-in link is no longer valid", "It expired, was already used, or was opened in another browser."));
    return undefined;
  }

  /** The key's workspaces (a few pages), or undefined when the workspace refuses the key. */
  async function workspacesOf(key: string): Promise<string[] | undefined> {
    const ids: string[] = [];
    let cursor: string | undefined;
    try {
      for (let page = 0; page < maxPages; page++) {
        const listed = await options.client.listWorkspaces(key, { limit: 100, ...(cursor ? { cursor } : {}) });
        ids.push(...listed.ids);
        if (!listed.hasMore || !listed.nextCursor) break;
        cursor = listed.nextCursor;
      }
    } catch (error) {
      if (error instanceof AdapterError && (error.status === 401 || error.status === 403)) return undefined;
      throw error;
    }
    return ids;
  }

  /** Whether the workspace refused a key with another 4xx (the guess stays counted: keys that make it fail are guesses too). */
  const refusedOtherwise = (error: unknown) => error instanceof AdapterError && error.status >= 400 && error.status < 500;

  function view(found: PendingAuthorization, nonce: string, step: ConsentView["step"], error?: string): string {
    return consentPage({
      action: `/oauth/interaction/${encodeURIComponent(found.uid)}`,
      csrf: box.sign("csrf", nonce, found.uid),
      clientName: found.clientName,
      clientId: found.clientId,
      redirectUri: found.redirectUri,
      verified: found.verified,
      offline: found.scopes.includes("offline_access"),
      step,
      error,
    });
  }

  const cookieFor = (nonce: string) => `${csrfCookie}=${nonce}; Path=/; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;

  /** A team set-up step submitted: sign in at the identity provider, or the workspace picked once signed in. */
  async function submitTeam(
    request: IncomingMessage,
    response: ServerResponse,
    found: PendingAuthorization,
    nonce: string,
    form: URLSearchParams,
  ): Promise<void> {
    const team = options.team as NonNullable<ConsentOptions["team"]>;
    if (form.get("step") === "sign-in") {
      const started = await team.signIn.start(found.uid, callbackUri);
      response.statusCode = 303;
      response.setHeader("location", started.url);
      response.setHeader("set-cookie", laxCookie(idpCookie, started.sealed));
      response.end();
      return;
    }
    const person = signedIn(request, found.uid);
    if (!person) {
      send(response, 403, view(found, nonce, { kind: "sign-in", issuer: team.issuer }, "Sign in first."));
      return;
    }
    const workspaces = await teamWorkspaces(person.groups);
    const workspace = form.get("workspace") ?? "";
    if (!workspaces.includes(workspace)) {
      send(response, 400, view(found, nonce, { kind: "workspace", workspaces }, "Pick one of the workspaces listed."));
      return;
    }
    const principal = credentialHash(`idp ${person.subject}`);
    const accountId = box.sign("account", principal);
    const grantId = await server.grant(accountId, found.clientId, found.scopes);
    await grants.put(grantId, { key: team.key, workspace, principal });
    options.logger.info({ client: found.clientId, workspace, principal }, "OAuth consent (team set-up): access granted");
    response.setHeader("set-cookie", [`${cookieFor("")}; Max-Age=0`, laxCookie(signedInCookie, "")]);
    await server.finish(request, response, { accountId, grantId });
  }


  /** Runs a step; a store that does not answer becomes a 503 page with `Retry-After`, not a 500. */
  async function pageOrUnavailable(response: ServerResponse, step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (error) {
      if (!storeDown(error) || response.headersSent) throw error;
      response.setHeader("retry-after", "5");
      send(response, 503, errorPage("The sign-in service is briefly unavailable", "Its store does not answer now. Wait a few seconds, then reload this page."));
    }
  }

  /** GET: the page's first step. */
  async function show(request: IncomingMessage, response: ServerResponse, uid: string): Promise<void> {
    const found = await pending(request, response, uid);
    if (!found) return;
    const nonce = cookiesOf(request).get(csrfCookie) ?? randomBytes(24).toString("base64url");
    const step = options.team ? await teamStep(request, found) : { kind: "key" as const };
    send(response, 200, view(found, nonce, step), cookieFor(nonce));
  }

  /** POST: a step submitted. */
  async function submit(request: IncomingMessage, response: ServerResponse, uid: string): Promise<void> {
    const form = await readForm(request);
    const found = await pending(request, response, uid);
    if (!found) return;
    const nonce = cookiesOf(request).get(csrfCookie);
    const csrf = form?.get("csrf");
    if (!form || !nonce || !csrf || !box.verify(csrf, "csrf", nonce, found.uid)) {
      send(response, 403, errorPage("This form did not come from this page", "The request was refused to protect your workspace (CSRF check failed)."));
      return;
    }
    if (form.get("action") === "deny") {
      await server.finish(request, response, { error: "access_denied", description: "The user denied access to the workspace" });
      return;
    }
    const step = form.get("step");
    if (options.team) {
      await submitTeam(request, response, found, nonce, form);
      return;
    }
    const key = step === "workspace" ? box.open(form.get("sealed_key") ?? "", `consent:${found.uid}`) : form.get("key")?.trim();
    if (!key || key.length > MAX_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
      send(response, 400, view(found, nonce, { kind: "key" }, "Type the workspace API key (it has no spaces)."));
      return;
    }
    if (options.reservedKey?.(key)) {
      send(response, 403, view(found, nonce, { kind: "key" }, "This key reads this adapter's usage or metrics: it is never sent to the workspace. Type a workspace API key."));
      return;
    }
    // A typed key is a guess until the workspace accepts it: counted first, taken back unless refused.
    const tried = step === "workspace" ? undefined : await countKeyTry(options.attempts, request, found.uid, found.clientId);
    if (tried && !tried.counted) {
      const minutes = Math.ceil(retryAfterSeconds(tried) / 60);
      options.logger.info({ client: found.clientId }, "OAuth consent: a key refused unchecked (too many wrong keys from one address)");
      response.setHeader("retry-after", String(retryAfterSeconds(tried)));
      const wait = `Too many wrong keys were tried from your address. Wait ${minutes} minute${minutes === 1 ? "" : "s"}, then try again.`;
      send(response, 429, view(found, nonce, { kind: "key" }, wait));
      return;
    }
    let workspaces: string[] | undefined;
    try {
      workspaces = await workspacesOf(key);
    } catch (error) {
      if (!refusedOtherwise(error)) tried?.uncount(); // the workspace did not answer: no guess was judged
      throw error;
    }
    if (workspaces !== undefined) tried?.uncount();
    if (workspaces === undefined) {
      options.logger.info({ client: found.clientId }, "OAuth consent: the workspace refused the key");
      send(response, 401, view(found, nonce, { kind: "key" }, "The workspace did not accept this key. Check it and try again."));
      return;
    }
    if (workspaces.length === 0) {
      send(response, 403, view(found, nonce, { kind: "key" }, "This key can read no workspace: use a key that can."));
      return;
    }
    const choose = { kind: "workspace" as const, sealedKey: box.seal(key, `consent:${found.uid}`), workspaces };
    if (step !== "workspace") {
      send(response, 200, view(found, nonce, choose));
      return;
    }
    const workspace = form.get("workspace") ?? "";
    if (!workspaces.includes(workspace)) {
      send(response, 400, view(found, nonce, choose, "Pick one of the workspaces this key can read."));
      return;
    }
    // The account id the library stores (grants, sessions, tokens): an HMAC of the key, never a bare hash of it.
    const accountId = box.sign("account", key);
    const grantId = await server.grant(accountId, found.clientId, found.scopes);
    await grants.put(grantId, { key, workspace });
    options.logger.info({ client: found.clientId, workspace }, "OAuth consent: access granted");
    response.setHeader("set-cookie", `${cookieFor("")}; Max-Age=0`);
    await server.finish(request, response, { accountId, grantId });
  }

  return {
    /** GET `/oauth/idp/callback`: the identity provider's redirect back; on to the consent page, signed in. */
    async signInCallback(request: IncomingMessage, response: ServerResponse): Promise<void> {
      if (!options.team) {
        send(response, 404, errorPage("No sign-in here", "This adapter has no identity provider configured."));
        return;
      }
      try {
        const params = new URL(request.url ?? "/", server.addresses.origin).searchParams;
        const { uid, subject, groups } = await options.team.signIn.finish(params, cookiesOf(request).get(idpCookie), callbackUri);
        response.statusCode = 303;
        response.setHeader("location", `/oauth/interaction/${encodeURIComponent(uid)}`);
        response.setHeader("set-cookie", [laxCookie(idpCookie, ""), laxCookie(signedInCookie, box.seal(JSON.stringify({ uid, subject, groups }), "signed-in"))]);
        response.end();
      } catch (error) {
        if (!(error instanceof SignInError)) throw error;
        send(response, 400, errorPage("The sign-in did not go through", error.message));
      }
    },

    /** GET: the page's first step (a page saying to try again when the store does not answer). */
    async show(request: IncomingMessage, response: ServerResponse, uid: string): Promise<void> {
      await pageOrUnavailable(response, () => show(request, response, uid));
    },

    /** POST: a step submitted (a page saying to try again when the store does not answer). */
    async submit(request: IncomingMessage, response: ServerResponse, uid: string): Promise<void> {
      await pageOrUnavailable(response, () => submit(request, response, uid));
    },
  };
}
