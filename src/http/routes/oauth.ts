import type { OAuthEdge } from "../../oauth/oauth-edge.js";
import { sendJson } from "../error-response.js";
import type { McpServe } from "../mcp/mcp-handler.js";
import { type Route, type RouteCall, route } from "../route-table.js";

/** What the OAuth routes are built from: the edge, and the MCP endpoint behind it. */
export interface OAuthRouteOptions {
  edge: OAuthEdge;
  /** `POST /mcp`'s endpoint, authenticating with `edge.authenticate`. */
  mcp: McpServe;
}

const WORKSPACE_SCOPE = "workspace";

/**
 * The routes of `MCP_OAUTH=on` (docs/mcp-oauth.md): `POST /oauth/mcp` (the MCP tools for a bearer
 * access token, in the grant's workspace), the protected resource's metadata at the path-aware
 * well-known URL (RFC 9728), the authorization server's metadata at the path-inserted one
 * (RFC 8414, issuer `<origin>/oauth`), the consent page, and the rest of `/oauth/*` (authorize,
 * token, register, revoke, jwks) served by the authorization server.
 */
export function oauthRoutes({ edge, mcp }: OAuthRouteOptions): Route[] {
  const library = ({ request, response }: RouteCall) => edge.serveLibrary(request, response, (request.url ?? "").slice("/oauth".length) || "/");
  const page = (summary: string) => ({ summary, responses: { "200": { description: "An HTML page" }, "400": { description: "An HTML page: the link expired or was used" } } });
  return [
    route(
      "POST",
      "/oauth/mcp",
      async (call) => {
        const { workspace } = await edge.admit(call.request);
        // The grant's workspace, whatever the request names: a grant is for one workspace.
        delete call.request.headers["service-workspace"];
        await mcp(call, workspace);
      },
      {
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
    ),
    route(
      "GET",
      "/oauth/interaction/{uid}",
      ({ request, response, params }) => edge.showConsent(request, response, params.uid),
      page("The consent page: the workspace key, and the workspace a client may use"),
    ),
    route(
      "POST",
      "/oauth/interaction/{uid}",
      ({ request, response, params }) => edge.submitConsent(request, response, params.uid),
      page("A step of the consent page, submitted (form)"),
    ),
    route(
      "GET",
      "/oauth/idp/callback",
      ({ request, response }) => edge.signInCallback(request, response),
      page("The team set-up's return from the identity provider (OAUTH_IDP_ISSUER), on to the consent page"),
    ),
    route(
      "GET",
      "/.well-known/oauth-protected-resource/oauth/mcp",
      ({ request, response }) => {
        response.setHeader("cache-control", "public, max-age=3600");
        sendJson(response, edge.resourceMetadata(request));
      },
      { summary: "Protected resource metadata of /oauth/mcp (RFC 9728)", responses: { "200": { description: "The metadata" } } },
    ),
    route(
      "GET",
      "/.well-known/oauth-authorization-server/oauth",
      ({ request, response }) => edge.serveLibrary(request, response, "/.well-known/openid-configuration"),
      { summary: "Authorization server metadata (RFC 8414) of the issuer <origin>/oauth", responses: { "200": { description: "The metadata" } } },
    ),
    route("GET", "/oauth/{rest+}", library, page("The authorization server: authorize, jwks, metadata")),
    route("POST", "/oauth/{rest+}", library, {
      summary: "The authorization server: token, register, revoke",
      responses: { "200": { description: "JSON (RFC 6749 errors as 400/401)" } },
    }),
  ];
}
