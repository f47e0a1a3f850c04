import { AnswerCard, type CardActions } from "./answer-card.js";
import { HostBridge, isObject } from "./host-bridge.js";
import { applyHostContext } from "./host-context.js";
import { readSourceText, readToolResult } from "./tool-result.js";

/** The MCP Apps revision the card speaks, and who it says it is. */
const PROTOCOL_VERSION = "2026-01-26";
const APP_INFO = { name: "workspace-answer-card", version: "1.0.0" };

/**
 * The answer card's start (docs/mcp.md#the-answer-card): the `ui/initialize` handshake with the
 * host, then the tool's input, result or cancellation as the host sends them. Its size goes to the
 * host whenever it changes, and the host's theme is followed as the host changes it.
 */
async function start(): Promise<void> {
  const root = document.getElementById("card");
  if (!root) return;
  const bridge = new HostBridge(window.parent, window);
  bridge.handle("ping", () => ({}));
  bridge.handle("ui/resource-teardown", () => ({}));
  // Filled in by the handshake: the host sends nothing to show before it (the specification's order).
  const actions: CardActions = {};
  const card = new AnswerCard(root, actions);
  let context: Record<string, unknown> = {};
  let question: string | undefined;
  bridge.on("ui/notifications/host-context-changed", (changed) => {
    context = { ...context, ...changed };
    applyHostContext(document.documentElement, context);
  });
  bridge.on("ui/notifications/tool-input-partial", (params) => card.working(questionOf(params) ?? question));
  bridge.on("ui/notifications/tool-input", (params) => {
    question = questionOf(params);
    card.working(question);
  });
  bridge.on("ui/notifications/tool-result", (params) => card.result(readToolResult(params)));
  bridge.on("ui/notifications/tool-cancelled", (params) => card.cancelled(typeof params.reason === "string" ? params.reason : undefined));
  reportSize(bridge, root);

  let initialized: unknown;
  try {
    initialized = await bridge.request("ui/initialize", { appInfo: APP_INFO, appCapabilities: { availableDisplayModes: ["inline"] }, protocolVersion: PROTOCOL_VERSION });
  } catch {
    card.alone("This card shows a workspace answer inside an MCP Apps host; none answered it here.");
    return;
  }
  const result = isObject(initialized) ? initialized : {};
  const capabilities = isObject(result.hostCapabilities) ? result.hostCapabilities : {};
  context = isObject(result.hostContext) ? result.hostContext : {};
  applyHostContext(document.documentElement, context);
  Object.assign(actions, actionsOf(bridge, capabilities));
  card.tool(toolNameOf(context));
  bridge.notify("ui/notifications/initialized");
}

/** What the host lets the card do: call the server's `fetch` (`serverTools`), open links (`openLinks`). */
function actionsOf(bridge: HostBridge, capabilities: Record<string, unknown>): CardActions {
  return {
    readSource: isObject(capabilities.serverTools)
      ? async (id) => readSourceText(await bridge.request("tools/call", { name: "fetch", arguments: { id } }))
      : undefined,
    openLink: isObject(capabilities.openLinks)
      ? async (url) => {
          await bridge.request("ui/open-link", { url });
        }
      : undefined,
  };
}

/** Tells the host the card's size whenever it changes (once per frame at most), so it can fit the frame to it. */
function reportSize(bridge: HostBridge, root: HTMLElement): void {
  let sent = "";
  let scheduled = false;
  const send = () => {
    scheduled = false;
    const box = root.getBoundingClientRect();
    const size = { width: Math.ceil(box.width), height: Math.ceil(box.height) };
    const key = `${size.width}x${size.height}`;
    if (key === sent) return;
    sent = key;
    bridge.notify("ui/notifications/size-changed", size);
  };
  new ResizeObserver(() => {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(send);
  }).observe(root);
}

function questionOf(params: Record<string, unknown>): string | undefined {
  const args = isObject(params.arguments) ? params.arguments : {};
  return typeof args.question === "string" ? args.question : typeof args.query === "string" ? args.query : undefined;
}

/** The tool that made the card (`hostContext.toolInfo.tool.name`), when the host says. */
function toolNameOf(context: Record<string, unknown>): string | undefined {
  const info = isObject(context.toolInfo) ? context.toolInfo : {};
  const tool = isObject(info.tool) ? info.tool : {};
  return typeof tool.name === "string" ? tool.name : undefined;
}

void start();
