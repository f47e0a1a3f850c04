import type { Request, RequestHandler, Response } from "express";
import type { Logger } from "pino";
import type { OAuthEdge } from "../../oauth/oauth-edge.js";
import { reportError, sendJson } from "../error-response.js";
import type { FastHandler, Route } from "../route-table.js";

/** What the OAuth routes are built from: the edge, and the MCP endpoint's handler behind it. */
export interface OAuthRouteOptions {
  edge: OAuthEdge;
  /** `POST /mcp`'s handler, built to authenticate with `edge.authenticate`. */
  mcp: FastHandler;
  logger: Logger;
}

const WORKSPACE_SCOPE = "workspace";

/**
 * The routes of `MCP_OAUTH=on` (docs/mcp-oauth.md): `POST /oauth/mcp` (the MCP tools for a bearer
 * access token, in the grant's workspace), the protected resource's metadata at the path-aware
 * well-known URL (RFC 9728), the authorization server's metadata at the path-inserted one
 * (RFC 8414, issuer `<origin>/oauth`), the consent page, and the rest of `/oauth/*` (authorize,
 * token, register, revoke, jwks) served by the authorization server.
 */
export function oauthRoutes({ edge, mcp, logger }: OAuthRouteOptions): Route[] {
  const express = (serve: (request: Request, response: Response) => Promise<void>): { express: RequestHandler } => ({
    express: (request, response) => {
      serve(request, response).catch((error: unknown) => reportError(error, response, logger, undefined));
    },
  });
  const uid = (params: Record<string, unknown>) => String(params.uid ?? "");
  const library = express((request, response) => edge.serveLibrary(request, response, request.originalUrl.slice("/oauth".length) || "/"));
  const page = (summary: string) => ({ summary, responses: { "200": { description: "An HTML page" }, "400": { description: "An HTML page: the link expired or was used" } } });
  return [
    {
      method: "POST",
      path: "/oauth/mcp",
      handler: {
        fast: (request, response) => {
          edge
            .admit(request)
            .then(({ workspace }) => {
              // The grant's workspace, whatever the request names: a grant is for one workspace.
              delete request.headers["service-workspace"];
              mcp(request, response, { workspace });
            })
            .catch((error: unknown) => reportError(error, response, logger, undefined));
        },
      },
      operation: {
        summary: "The workspace as a remote MCP server, for an OAuth access token (MCP_OAUTH=on)",
        description:
          "The tools of `/mcp`, in the workspace picked at consent, for a bearer access token this adapter issued (docs/mcp-oauth.md). " +
          "Without a valid one: 401 with `WWW-Authenticate: Bearer resource_metadata=…` (where discovery starts).",
        security: [{ oauth: [WORKSPACE_SCOPE] }],
        responses: {
          "200": { description: "The JSON-RPC response, as JSON or an SSE stream" },
          "401": { description: "No valid access token; `WWW-Authenticate` names the resource metadata" },
        },
      },
    },
    {
      method: "GET",
      path: "/oauth/interaction/{uid}",
      handler: express((request, response) => edge.showConsent(request, response, uid(request.params))),
      operation: page("The consent page: the workspace key, and the workspace a client may use"),
    },
    {
      method: "POST",
      path: "/oauth/interaction/{uid}",
      handler: express((request, response) => edge.submitConsent(request, response, uid(request.params))),
      operation: page("A step of the consent page, submitted (form)"),
    },
    {
      method: "GET",
      path: "/oauth/idp/callback",
      handler: express((request, response) => edge.signInCallback(request, response)),
      operation: page("The team set-up's return from the identity provider (OAUTH_IDP_ISSUER), on to the consent page"),
    },
    {
      method: "GET",
      path: "/.well-known/oauth-protected-resource/oauth/mcp",
      handler: express(async (request, response) => {
        response.setHeader("cache-control", "public, max-age=3600");
        sendJson(response, edge.resourceMetadata(request));
      }),
      operation: { summary: "Protected resource metadata of /oauth/mcp (RFC 9728)", responses: { "200": { description: "The metadata" } } },
    },
    {
      method: "GET",
      path: "/.well-known/oauth-authorization-server/oauth",
      handler: express((request, response) => edge.serveLibrary(request, response, "/.well-known/openid-configuration")),
      operation: { summary: "Authorization server metadata (RFC 8414) of the issuer <origin>/oauth", responses: { "200": { description: "The metadata" } } },
    },
    { method: "GET", path: "/oauth/{rest+}", handler: library, operation: page("The authorization server: authorize, jwks, metadata") },
    {
      method: "POST",
      path: "/oauth/{rest+}",
      handler: library,
      operation: { summary: "The authorization server: token, register, revoke", responses: { "200": { description: "JSON (RFC 6749 errors as 400/401)" } } },
    },
  ];
}
