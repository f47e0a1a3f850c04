// The page of the test MCP Apps host (test/helpers/app-host/app-host.ts bundles it with esbuild):
// the SDK's own AppBridge mounts a view in a sandboxed frame with the policy its resource declares,
// as ext-apps' reference host does, and forwards the view's `tools/call` to the test's MCP client
// (`callServerTool`, exposed by the test). Everything it saw is kept on `window.testHost`.
import type { CallToolResult } from "@modelcontextprotocol/client";
import type { McpUiHostContext, McpUiResourceCsp } from "@modelcontextprotocol/ext-apps/app-bridge";
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

declare global {
  interface Window {
    /** The test's MCP client, pointed at the adapter (Playwright's `exposeFunction`). */
    callServerTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<CallToolResult>;
    testHost: TestHost;
  }
}

/** What the host did and saw. */
interface TestHost {
  openedLinks: string[];
  sizes: { width?: number | undefined; height?: number | undefined }[];
  mount(html: string, csp: McpUiResourceCsp | undefined, hostContext: McpUiHostContext): Promise<void>;
  toolInput(args: Record<string, unknown>): Promise<void>;
  toolResult(result: CallToolResult): Promise<void>;
  toolCancelled(reason: string): Promise<void>;
  hostContext(context: McpUiHostContext): void;
}

/** The policy the specification tells hosts to build from a view's declared domains (its "CSP construction"). */
function policyOf(csp: McpUiResourceCsp | undefined): string {
  const resources = (csp?.resourceDomains ?? []).join(" ");
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${resources}`,
    `style-src 'self' 'unsafe-inline' ${resources}`,
    `connect-src 'self' ${(csp?.connectDomains ?? []).join(" ")}`,
    `img-src 'self' data: ${resources}`,
    `font-src 'self' ${resources}`,
    `media-src 'self' data: ${resources}`,
    `frame-src ${(csp?.frameDomains ?? []).join(" ") || "'none'"}`,
    "object-src 'none'",
    `base-uri ${(csp?.baseUriDomains ?? []).join(" ") || "'self'"}`,
  ].join("; ");
}

let bridge: AppBridge | undefined;
const connected = () => {
  if (!bridge) throw new Error("no view is mounted");
  return bridge;
};

window.testHost = {
  openedLinks: [],
  sizes: [],
  async mount(html, csp, hostContext) {
    const frame = document.createElement("iframe");
    // No allow-same-origin: the view runs on an opaque origin, as hosts run it.
    frame.setAttribute("sandbox", "allow-scripts");
    frame.title = "Workspace answer";
    frame.style.cssText = "width: 640px; height: 120px; border: 1px solid #ccc; display: block";
    document.body.append(frame);
    const view = frame.contentWindow as Window;
    const host = new AppBridge(null, { name: "adapter-test-host", version: "1.0.0" }, { openLinks: {}, serverTools: {}, logging: {} }, { hostContext });
    host.oncalltool = (params) => window.callServerTool(params);
    host.onopenlink = async ({ url }) => {
      window.testHost.openedLinks.push(url);
      return {};
    };
    host.onsizechange = ({ width, height }) => {
      window.testHost.sizes.push({ width, height });
      if (height !== undefined) frame.style.height = `${height}px`;
    };
    const initialized = new Promise<void>((resolve) => {
      host.oninitialized = () => resolve();
    });
    await host.connect(new PostMessageTransport(view, view));
    const policy = `<meta http-equiv="Content-Security-Policy" content="${policyOf(csp)}">`;
    frame.srcdoc = html.replace(/<head[^>]*>/i, (head) => `${head}${policy}`);
    await initialized;
    bridge = host;
  },
  toolInput: (args) => connected().sendToolInput({ arguments: args }),
  toolResult: (result) => connected().sendToolResult(result),
  toolCancelled: (reason) => connected().sendToolCancelled({ reason }),
  hostContext: (context) => connected().setHostContext(context),
};
