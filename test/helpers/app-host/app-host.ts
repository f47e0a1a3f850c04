import { mkdirSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { Browser, Frame, Page } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));

/** Where browser tests keep what a person should look at (screenshots); gitignored. */
export const TEST_OUTPUT = join(here, "../../../test-output");

/** A running test host: its page's address. */
export interface AppHostServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves the test MCP Apps host on loopback: one page whose script is host-page.ts bundled with
 * esbuild (the SDK's AppBridge and what it imports), built once here.
 */
export async function startAppHost(): Promise<AppHostServer> {
  const bundled = await build({
    entryPoints: [join(here, "host-page.ts")],
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    target: ["es2022"],
    logLevel: "warning",
  });
  const script = bundled.outputFiles[0]?.text ?? "";
  const page = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test MCP Apps host</title><script src="/host.js"></script></head><body></body></html>';
  const server = createServer((request, response) => {
    const [type, body] = request.url === "/host.js" ? ["text/javascript", script] : ["text/html", page];
    response.writeHead(200, { "content-type": `${type}; charset=utf-8`, "cache-control": "no-store" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A view mounted in the test host, and all the host saw. */
export interface MountedView {
  page: Page;
  /** The view's frame. */
  frame: Frame;
  /** Console errors and warnings (a policy violation is one), page errors, and requests that left the host's own origin. */
  problems: string[];
  /** The `tools/call`s the view made through the host, with what the server answered. */
  toolCalls: { params: { name: string; arguments?: Record<string, unknown> }; result: unknown }[];
  openedLinks(): Promise<string[]>;
  sizes(): Promise<{ width?: number; height?: number }[]>;
  toolInput(args: Record<string, unknown>): Promise<void>;
  toolResult(result: unknown): Promise<void>;
  toolCancelled(reason: string): Promise<void>;
  hostContext(context: Record<string, unknown>): Promise<void>;
  /** Keeps a picture of the page in the test output folder. */
  screenshot(name: string): Promise<string>;
}

/**
 * Opens the test host in a fresh page and mounts a view: its HTML and declared policy from the
 * server's `resources/read`, the host context given, the view's `tools/call`s answered by `callTool`
 * (the test's real MCP client).
 */
export async function mountView(
  browser: Browser,
  host: AppHostServer,
  view: { html: string; csp: unknown; hostContext: Record<string, unknown> },
  callTool: (params: { name: string; arguments?: Record<string, unknown> }) => Promise<unknown>,
): Promise<MountedView> {
  const page = await browser.newPage({ viewport: { width: 700, height: 900 } });
  const problems: string[] = [];
  const toolCalls: MountedView["toolCalls"] = [];
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") problems.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("request", (request) => {
    if (!request.url().startsWith(host.url)) problems.push(`request: ${request.url()}`);
  });
  await page.exposeFunction("callServerTool", async (params: { name: string; arguments?: Record<string, unknown> }) => {
    const result = await callTool(params);
    toolCalls.push({ params, result });
    return result;
  });
  await page.goto(host.url);
  await page.evaluate(({ html, csp, hostContext }) => window.testHost.mount(html, csp, hostContext), view);
  const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
  if (!frame) throw new Error("the view's frame is missing");
  const run = (name: string, arg: unknown) => page.evaluate(([method, value]) => window.testHost[method as string](value), [name, arg] as const);
  return {
    page,
    frame,
    problems,
    toolCalls,
    openedLinks: () => page.evaluate(() => window.testHost.openedLinks),
    sizes: () => page.evaluate(() => window.testHost.sizes),
    toolInput: (args) => run("toolInput", args),
    toolResult: (result) => run("toolResult", result),
    toolCancelled: (reason) => run("toolCancelled", reason),
    hostContext: (context) => run("hostContext", context),
    async screenshot(name) {
      const folder = join(TEST_OUTPUT, "answer-card");
      mkdirSync(folder, { recursive: true });
      const path = join(folder, `${name}.png`);
      await page.screenshot({ path, fullPage: true });
      return path;
    },
  };
}

// Browser globals, for the functions above that run in the page.
declare const window: any;
