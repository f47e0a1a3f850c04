import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { credentialHash } from "../auth/credential-hash.js";
import { AdapterError } from "../errors/adapter-error.js";
import type { WorkspaceClient } from "../upstream/workspace-client.js";
import type { AuthorizationServer, PendingAuthorization } from "./authorization-server.js";
import { type ConsentView, consentPage, errorPage, PAGE_HEADERS } from "./consent-page.js";
import type { GrantKeys } from "./grant-keys.js";
import type { SecretBox } from "./secret-box.js";

/** What the consent step is built from. */
export interface ConsentOptions {
  box: SecretBox;
  grants: GrantKeys;
  client: Pick<WorkspaceClient, "listWorkspaces">;
  logger: Logger;
  /** Pages of the key's workspace list read to offer and check a choice (100 ids a page). */
  maxPages?: number;
}

const FORM_LIMIT_BYTES = 16 * 1024;

function cookiesOf(request: IncomingMessage): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (request.headers.cookie ?? "").split(";")) {
    const equals = part.indexOf("=");
    if (equals > 0) cookies.set(part.slice(0, equals).trim(), part.slice(equals + 1).trim());
  }
  return cookies;
}

async function readForm(request: IncomingMessage): Promise<URLSearchParams | undefined> {
  if (!/^application\/x-www-form-urlencoded\b/i.test(request.headers["content-type"] ?? "")) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > FORM_LIMIT_BYTES) return undefined;
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

function send(response: ServerResponse, status: number, html: string, cookie?: string): void {
  response.statusCode = status;
  for (const [name, value] of Object.entries(PAGE_HEADERS)) response.setHeader(name, value);
  if (cookie) response.setHeader("set-cookie", cookie);
  response.end(html);
}

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

  function view(found: PendingAuthorization, nonce: string, step: ConsentView["step"], error?: string): string {
    return consentPage({
      action: `/oauth/interaction/${encodeURIComponent(found.uid)}`,
      csrf: box.sign("csrf", nonce, found.uid),
      clientName: found.clientName,
      clientId: found.clientId,
      redirectUri: found.redirectUri,
      step,
      error,
    });
  }

  const cookieFor = (nonce: string) => `${csrfCookie}=${nonce}; Path=/; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;

  return {
    /** GET: the page's first step. */
    async show(request: IncomingMessage, response: ServerResponse, uid: string): Promise<void> {
      const found = await pending(request, response, uid);
      if (!found) return;
      const nonce = cookiesOf(request).get(csrfCookie) ?? randomBytes(24).toString("base64url");
      send(response, 200, view(found, nonce, { kind: "key" }), cookieFor(nonce));
    },

    /** POST: a step submitted. */
    async submit(request: IncomingMessage, response: ServerResponse, uid: string): Promise<void> {
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
      const key = step === "workspace" ? box.open(form.get("sealed_key") ?? "", `consent:${found.uid}`) : form.get("key")?.trim();
      if (!key || !/^[\x21-\x7e]+$/.test(key)) {
        send(response, 400, view(found, nonce, { kind: "key" }, "Type the workspace API key (it has no spaces)."));
        return;
      }
      const workspaces = await workspacesOf(key);
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
      const accountId = credentialHash(key);
      const grantId = await server.grant(accountId, found.clientId, found.offline);
      await grants.put(grantId, { key, workspace });
      options.logger.info({ client: found.clientId, workspace }, "OAuth consent: access granted");
      response.setHeader("set-cookie", `${cookieFor("")}; Max-Age=0`);
      await server.finish(request, response, { accountId, grantId });
    },
  };
}
