import { readFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "../../util/package-info.js";
import { endWithBytes, sendJson } from "../error-response.js";
import { type Route, type RouteCall, route } from "../route-table.js";

/**
 * A strict policy for the playground: its own script and stylesheet only (no inline script or
 * style, no eval), requests to the adapter itself only, nothing framed, nothing posted elsewhere.
 */
const POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** What the page is told: whether the upstream is the embedded workspace, and what to prefill. */
export interface PlaygroundSettings {
  embedded: boolean;
  defaultWorkspace: string | null;
  key: string | null;
  /** Whether `/mcp` is served: the developer view then offers the MCP configuration. */
  mcp: boolean;
}

/** The files the build wrote (scripts/build-playground.mjs), read once when the adapter starts. */
function builtFiles(): Record<"index.html" | "app.js" | "app.css", { type: string; body: Buffer }> | null {
  const folder = join(projectRoot(), "dist/playground");
  try {
    return {
      "index.html": { type: "text/html; charset=utf-8", body: readFileSync(join(folder, "index.html")) },
      "app.js": { type: "text/javascript; charset=utf-8", body: readFileSync(join(folder, "app.js")) },
      "app.css": { type: "text/css; charset=utf-8", body: readFileSync(join(folder, "app.css")) },
    };
  } catch {
    return null;
  }
}

/**
 * The playground (`GET /`, its script, stylesheet and settings): a page to ask the workspace, watch
 * the answer stream with its steps and sources, and see the frames exactly as received. Built at
 * `npm install`/`npm start` time; an adapter without the built files serves none of it.
 */
export function playgroundRoutes(settings: PlaygroundSettings): Route[] {
  const files = builtFiles();
  if (!files) return [];
  const serve =
    (file: { type: string; body: Buffer }, cache: string) =>
    ({ response }: RouteCall): void => {
      response.setHeader("content-security-policy", POLICY);
      response.setHeader("referrer-policy", "no-referrer");
      response.setHeader("cache-control", cache);
      response.setHeader("content-type", file.type);
      endWithBytes(response, file.body);
    };
  const page = { summary: "The playground page", responses: { "200": { description: "HTML, script or stylesheet" } } };
  const assets = "public, max-age=300";
  return [
    route("GET", "/", serve(files["index.html"], "no-cache"), page),
    route("GET", "/playground/app.js", serve(files["app.js"], assets), page),
    route("GET", "/playground/app.css", serve(files["app.css"], assets), page),
    route(
      "GET",
      "/favicon.ico",
      ({ response }) => {
        response.statusCode = 204;
        response.end();
      },
      { summary: "No icon (browsers ask for one)", responses: { "204": { description: "Nothing" } } },
    ),
    route(
      "GET",
      "/playground/settings.json",
      ({ response }) => {
        response.setHeader("cache-control", "no-store");
        sendJson(response, settings);
      },
      { summary: "What the playground prefills", responses: { "200": { description: "Settings" } } },
    ),
  ];
}
