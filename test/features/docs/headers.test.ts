import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/config.js";
import { ADAPTER_HEADERS, type AdapterHeader, type AnswerOperation, headersTable } from "../../../src/http/headers.js";
import { projectRoot } from "../../../src/util/package-info.js";
import { type Stack, startStack } from "../../helpers/start-stack.js";

// One list of the adapter's headers (src/http/headers.ts) and everything that names one: the code
// that reads or sends it, CORS, the OpenAPI operations of the answer routes and the docs. CORS,
// OpenAPI and the docs table are written from the list; this test holds the code and the pages to
// it, so that a header added in one place and forgotten in another fails here.

const root = projectRoot();

/** Folders whose headers are another party's: the upstream's stand-in, the client `check` is, the browser pages. */
const OTHER_PARTIES = ["src/embedded-workspace/", "src/check/", "src/playground/", "src/mcp-app/"];

/** Header-like names in the code that are not headers of the adapter's API. */
const NOT_OURS = new Map([
  ["x-mcp-tools", "an OpenAPI extension key"],
  ["x-powered-by", "Express's setting, turned off: the header is never sent"],
  ["x-forwarded-host", "written onto a request for oidc-provider, which builds its URLs from it; never read from a client"],
  ["x-forwarded-proto", "written onto a request for oidc-provider, as x-forwarded-host"],
]);

/** HTTP's own headers (and CORS's, the W3C trace context's, a WebSocket handshake's), which the list leaves out. */
const STANDARD = new Set(
  [
    "accept", "access-control-allow-headers", "access-control-allow-methods", "access-control-allow-origin", "access-control-expose-headers",
    "access-control-max-age", "access-control-request-headers", "allow", "authorization", "cache-control", "connection", "content-length",
    "content-security-policy", "content-type", "cookie", "host", "location", "origin", "referrer-policy", "set-cookie", "traceparent",
    "tracestate", "transfer-encoding", "user-agent", "vary", "www-authenticate", "upgrade", "sec-websocket-key", "sec-websocket-version",
  ],
);

/**
 * The headers a source text names: a quoted name of the adapter's families (`x-…`, `service-…`,
 * `mcp-…`, `retry-after`), or any name it sets or reads by literal (`setHeader("…")`, `headers["…"]`).
 */
function headersNamed(text: string): Set<string> {
  const families = /["'`]((?:x|service|mcp)-[a-z0-9-]+|retry-after(?:-ms)?)["'`]/gi;
  const accessed = /(?:(?:set|get|remove|has)Header\(\s*|headers\[\s*)["'`]([A-Za-z][A-Za-z0-9-]*)["'`]/g;
  return new Set([...text.matchAll(families), ...text.matchAll(accessed)].map((match) => (match[1] as string).toLowerCase()));
}

/** What the list misses of the headers one source names. */
function unlisted(text: string, listed: ReadonlySet<string>): string[] {
  return [...headersNamed(text)].filter((name) => !listed.has(name) && !NOT_OURS.has(name) && !STANDARD.has(name));
}

const sources = readdirSync(join(root, "src"), { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
  .map((entry) => relative(root, join(entry.parentPath, entry.name)).split(sep).join("/"))
  .filter((path) => !OTHER_PARTIES.some((folder) => path.startsWith(folder)) && path !== "src/http/headers.ts");
const listed = new Set(ADAPTER_HEADERS.map((header) => header.name.toLowerCase()));
const sendsBack = (header: AdapterHeader) => header.direction === "response" || header.direction === "both";
const readsFromClient = (header: AdapterHeader) => header.direction === "request" || header.direction === "both";

describe("the adapter's headers (src/http/headers.ts)", () => {
  it("list every header the code reads or sends", () => {
    const missing = sources.flatMap((path) => unlisted(readFileSync(join(root, path), "utf8"), listed).map((name) => `${path}: ${name}`));
    expect(missing).toEqual([]);
  });

  it("list only headers the code names (a conversation id header as CONVERSATION_ID_HEADERS's default)", () => {
    const code = sources.map((path) => readFileSync(join(root, path), "utf8").toLowerCase()).join("\n");
    const defaults = loadConfig({}).continuity.conversationIdHeaders;
    expect(defaults.length).toBeGreaterThan(0);
    expect(ADAPTER_HEADERS.filter((header) => !code.includes(`"${header.name.toLowerCase()}"`) && !defaults.includes(header.name.toLowerCase())).map((header) => header.name)).toEqual([]);
    expect(ADAPTER_HEADERS.length).toBe(listed.size);
  });

  it("are really checked: a header set, read or quoted but not listed is found; a listed or standard one is not", () => {
    const text = [
      'response.setHeader("x-workspace-query-id", id);',
      'const id = request.headers["x-trace-me"];',
      'response.setHeader("service-query-id", ids); response.setHeader("cache-control", "no-store");',
      'const named = "Service-New-Thing"; response.setHeader("Warning", "199"); const map = new Map([["key", 1]]);',
    ].join("\n");
    expect(unlisted(text, listed).sort()).toEqual(["service-new-thing", "warning", "x-trace-me", "x-workspace-query-id"]);
  });

  it("are each described on the page the list names, and in the table npm run docs writes into docs/operating.md", () => {
    const undescribed = ADAPTER_HEADERS.filter((header) => {
      const [page = ""] = header.page.split("#");
      const text = readFileSync(join(root, "docs", page), "utf8").toLowerCase();
      const name = header.name.toLowerCase();
      // A family of headers may be written as a table writes it: `x-ratelimit-limit-tokens`, `-remaining-tokens`.
      const [first, second, ...rest] = name.split("-");
      return !text.includes(name) && !(text.includes(`${first}-${second}-`) && rest.length > 0 && text.includes(`-${rest.join("-")}`));
    });
    expect(undescribed.map((header) => `${header.name}: ${header.page}`)).toEqual([]);
    const operating = readFileSync(join(root, "docs/operating.md"), "utf8");
    expect(operating).toContain(`-->\n${headersTable()}\n<!-- headers-table:end -->`);
  });
});

describe("the adapter's headers, served", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ CORS_ORIGINS: "https://app.example" });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("are readable by an allowed browser page as listed: CORS exposes every header listed as exposed, and no other", async () => {
    const answer = await fetch(`${stack.url}/v1/models`, { headers: { origin: "https://app.example" } });
    await answer.arrayBuffer();
    const exposed = (answer.headers.get("access-control-expose-headers") ?? "").split(/,\s*/).sort();
    const expected = ADAPTER_HEADERS.filter((header) => sendsBack(header) && header.exposed).map((header) => header.name.toLowerCase());
    expect(expected.length).toBeGreaterThan(5);
    expect(exposed).toEqual(expected.sort());
  });

  it("may be sent by an allowed browser page: a preflight that names none allows every header a client sends", async () => {
    const preflight = await fetch(`${stack.url}/v1/chat/completions`, { method: "OPTIONS", headers: { origin: "https://app.example", "access-control-request-method": "POST" } });
    expect(preflight.status).toBe(204);
    const allowed = (preflight.headers.get("access-control-allow-headers") ?? "").split(/,\s*/);
    expect(ADAPTER_HEADERS.filter(readsFromClient).map((header) => header.name.toLowerCase()).filter((name) => !allowed.includes(name))).toEqual([]);
  });

  it("are declared by the answer operations of /openapi.json where they apply, and those declare no header the list lacks", async () => {
    const document = (await (await fetch(`${stack.url}/openapi.json`)).json()) as { paths: Record<string, { post: OpenApiOperation }> };
    const operations: Record<AnswerOperation, OpenApiOperation[]> = {
      "chat-completions": [document.paths["/v1/chat/completions"]?.post as OpenApiOperation],
      responses: [document.paths["/v1/responses"]?.post as OpenApiOperation],
      mcp: [document.paths["/mcp"]?.post as OpenApiOperation, document.paths["/mcp/{workspace}"]?.post as OpenApiOperation],
    };
    const missing: string[] = [];
    const extra: string[] = [];
    for (const [name, described] of Object.entries(operations) as [AnswerOperation, OpenApiOperation[]][]) {
      for (const operation of described) {
        const parameters = new Set((operation.parameters ?? []).filter((parameter) => parameter.in === "header").map((parameter) => parameter.name));
        const sent = new Set(Object.keys(operation.responses["200"]?.headers ?? {}));
        for (const header of ADAPTER_HEADERS.filter((header) => header.operations.includes(name))) {
          if (readsFromClient(header) && !parameters.has(header.name)) missing.push(`${name}: parameter ${header.name}`);
          if (sendsBack(header) && !sent.has(header.name)) missing.push(`${name}: 200 header ${header.name}`);
        }
        for (const header of [...parameters, ...sent]) if (!listed.has(header.toLowerCase())) extra.push(`${name}: ${header}`);
      }
    }
    expect(missing).toEqual([]);
    expect(extra).toEqual([]);
  });
});

interface OpenApiOperation {
  parameters?: { name: string; in: string }[];
  responses: Record<string, { headers?: Record<string, unknown> }>;
}
