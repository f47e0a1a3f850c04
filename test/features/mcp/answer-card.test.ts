import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { documentReader } from "../../../src/embedded-workspace/read-document.js";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { type AppHostServer, mountView, type MountedView, startAppHost } from "../../helpers/app-host/app-host.js";
import { startBrowser } from "../../helpers/browser.js";
import { CHROMIUM, describeWith } from "../../helpers/external-programs.js";
import { API_KEY, FIXTURE_DOCUMENTS, type RunningAdapter, startAdapter } from "../../helpers/start-stack.js";
import { waitFor } from "../../helpers/wait-for.js";

// The answer card (docs/mcp.md#the-answer-card) in a real browser, in a test host built on the
// MCP Apps SDK's own AppBridge, fed by a real MCP client pointed at the adapter: the card's HTML
// and policy come from resources/read, the results from real tool calls, and the card's own
// `fetch` calls go through the host to the adapter. Screenshots land in test-output/answer-card/.

// Functions passed to the frame run in the browser; this project's types are Node's.
declare const document: any;
declare const getComputedStyle: any;

const QUESTION = "How are security incidents reported?";

describeWith(CHROMIUM, "the answer card, rendered by an MCP Apps host", () => {
  let workspace: RunningWorkspace;
  let adapter: RunningAdapter;
  let client: Client;
  let browser: Browser;
  let host: AppHostServer;
  let card: { html: string; csp: unknown };
  let askTool: Record<string, unknown>;

  beforeAll(async () => {
    workspace = await startEmbeddedWorkspace({ documents: [FIXTURE_DOCUMENTS], workspaces: ["acme"], stepDelayMs: 20 });
    let listening = "";
    adapter = await startAdapter(workspace.url, { DEFAULT_WORKSPACE: "acme" }, undefined, {
      documents: documentReader([FIXTURE_DOCUMENTS]),
      publicUrl: () => listening,
    });
    listening = adapter.url;
    // A host that renders MCP Apps, on the current revision: it declares the extension with every request.
    client = new Client(
      { name: "test-apps-host", version: "1.0.0" },
      {
        versionNegotiation: { mode: { pin: "2026-07-28" } },
        capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } },
      },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(`${adapter.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${API_KEY}` } } }));
    const tools = (await client.listTools()).tools;
    askTool = tools.find((tool) => tool.name === "ask") as Record<string, unknown>;
    const uri = (askTool._meta as { ui: { resourceUri: string } }).ui.resourceUri;
    const [contents] = (await client.readResource({ uri })).contents as any[];
    card = { html: contents.text, csp: contents._meta.ui.csp };
    [browser, host] = await Promise.all([startBrowser(), startAppHost()]);
  });
  afterAll(async () => {
    await browser?.close();
    await host?.close();
    await client?.close();
    await adapter?.close();
    await workspace?.close();
  });

  const callTool = (params: { name: string; arguments?: Record<string, unknown> }) => client.callTool(params);
  const mount = (hostContext: Record<string, unknown> = {}) =>
    mountView(browser, host, { ...card, hostContext: { theme: "light", displayMode: "inline", toolInfo: { id: 1, tool: askTool }, ...hostContext } }, callTool);
  const text = (view: MountedView, selector: string) => view.frame.locator(selector).first().innerText();

  it("shows the question while working, then the answer, its steps collapsed and its sources; a source reads its text through the host", async () => {
    const view = await mount();
    await view.toolInput({ question: QUESTION });
    expect(await text(view, ".question")).toBe(QUESTION);
    expect(await text(view, ".status")).toBe("Working on it…");
    expect(await text(view, ".tool")).toBe("ASK");

    const result = (await client.callTool({ name: "ask", arguments: { question: QUESTION } })) as any;
    const { answer, sources, steps } = result.structuredContent;
    await view.toolResult(result);
    await view.frame.locator(".answer p").first().waitFor();
    expect(await view.frame.locator(".status").isHidden()).toBe(true);
    // The answer's text, its markers turned into buttons that name their source.
    expect(await text(view, ".answer")).toContain("within one hour");
    expect(answer).toContain("within one hour");
    const markers = view.frame.locator(".answer .cite");
    expect(await markers.count()).toBeGreaterThan(0);
    // The steps, collapsed.
    expect(steps.length).toBeGreaterThan(0);
    expect(await text(view, ".steps summary")).toBe(`Steps (${steps.length})`);
    expect(await view.frame.locator(".steps").getAttribute("open")).toBeNull();
    expect(await view.frame.locator(".steps li").count()).toBe(steps.length);
    // Every source: number, title, file, page, excerpt, cited or not.
    const items = view.frame.locator(".source");
    expect(await items.count()).toBe(sources.length);
    for (const [index, source] of sources.entries()) {
      const item = items.nth(index);
      expect(await item.locator(".n").innerText()).toBe(`[${source.n}]`);
      expect(await item.locator(".title").innerText()).toBe(source.title ?? source.filename);
      expect(await item.locator(".badge").innerText()).toBe(source.cited ? "cited" : "not cited");
      if (source.snippet) expect(await item.locator(".excerpt").innerText()).toBe(source.snippet);
    }

    // A source, expanded: `fetch` through the host, served by the adapter, its text shown in the card.
    const first = sources[0];
    await items.first().locator(".source-toggle").click();
    await items.first().locator(".document-text").waitFor();
    expect(view.toolCalls.map((call) => call.params)).toEqual([{ name: "fetch", arguments: { id: first.id } }]);
    const fetched = view.toolCalls[0]?.result as any;
    expect(fetched.isError).toBeUndefined();
    expect(fetched.structuredContent.metadata.text_is).toBe("document");
    expect(await items.first().locator(".document-text").textContent()).toBe(fetched.structuredContent.text);

    // "Open" asks the host to open the source's page.
    await items.first().locator(".open").click();
    await waitFor(async () => (await view.openedLinks()).length === 1, "the host was asked to open a link");
    expect(await view.openedLinks()).toEqual([first.url]);
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/documents\/acme\//);

    // A marker opens its source.
    const marker = markers.first();
    const n = Number(/\d+/.exec(await marker.innerText())?.[0]);
    await marker.click();
    await waitFor(async () => (await view.frame.locator(`#source-${n}`).getAttribute("class"))?.includes("expanded") === true, "the marker's source expanded");

    // The card told the host its size, and the host fitted the frame to it.
    const sizes = await view.sizes();
    expect(sizes.length).toBeGreaterThan(0);
    const last = sizes.at(-1) as { height: number };
    expect(last.height).toBeGreaterThan(200);
    expect(await view.page.evaluate(() => document.querySelector("iframe").getBoundingClientRect().height)).toBeGreaterThanOrEqual(last.height);

    await view.screenshot("answer-light");
    expect(view.problems).toEqual([]);
    await view.page.close();
  });

  it("follows a dark host theme and its style variables", async () => {
    const view = await mount({ theme: "dark", styles: { variables: { "--color-background-primary": "#101014", "--color-text-info": "#8ab4ff", "--font-sans": "url(https://fonts.example/x)" } } });
    await view.toolInput({ question: QUESTION });
    await view.toolResult(await client.callTool({ name: "ask", arguments: { question: QUESTION } }));
    await view.frame.locator(".answer p").first().waitFor();
    const colours = await view.frame.evaluate(() => ({
      theme: document.documentElement.dataset.theme,
      background: getComputedStyle(document.body).backgroundColor,
      ink: getComputedStyle(document.body).color,
      accent: getComputedStyle(document.querySelector(".cite")).color,
      font: document.documentElement.style.getPropertyValue("--font-sans"),
    }));
    expect(colours).toEqual({ theme: "dark", background: "rgb(16, 16, 20)", ink: "rgb(236, 236, 241)", accent: "rgb(138, 180, 255)", font: "" });
    // The host changes its mind: the card follows.
    await view.hostContext({ theme: "light", styles: { variables: { "--color-background-primary": "#fafafa" } } });
    await waitFor(async () => (await view.frame.evaluate(() => getComputedStyle(document.body).backgroundColor)) === "rgb(250, 250, 250)", "the light theme");
    await view.hostContext({ theme: "dark", styles: { variables: { "--color-background-primary": "#101014" } } });
    await waitFor(async () => (await view.frame.evaluate(() => getComputedStyle(document.body).backgroundColor)) === "rgb(16, 16, 20)", "the dark theme again");
    await view.screenshot("answer-dark");
    expect(view.problems).toEqual([]);
    await view.page.close();
  });

  it("shows a cancelled call as cancelled, and the adapter stops the call", async () => {
    const view = await mount();
    const question = "How much leave do employees get? [fault:stall]";
    await view.toolInput({ question });
    const controller = new AbortController();
    const call = client.callTool({ name: "ask", arguments: { question } }, { signal: controller.signal });
    await waitFor(() => adapter.adapter.limit.inFlight === 1, "the call reached the adapter");
    controller.abort("The user stopped it");
    await expect(call).rejects.toThrow();
    await view.toolCancelled("The user stopped it");
    await view.frame.locator('.status[data-state="cancelled"]').waitFor();
    expect(await text(view, ".status")).toBe("Cancelled: The user stopped it");
    expect(await text(view, ".question")).toBe(question);
    await waitFor(() => adapter.adapter.limit.inFlight === 0, "the adapter ended the call");
    await view.screenshot("cancelled");
    expect(view.problems).toEqual([]);
    await view.page.close();
  });

  it("shows an error result as an alert with the tool's message", async () => {
    const view = await mount();
    const question = "How much leave do employees get? [fault:failed]";
    await view.toolInput({ question });
    const result = (await client.callTool({ name: "ask", arguments: { question } })) as any;
    expect(result.isError).toBe(true);
    await view.toolResult(result);
    const alert = view.frame.locator('[role="alert"]');
    await alert.waitFor();
    expect(await alert.innerText()).toBe(result.content[0].text);
    // Nothing of an answer is shown: no steps, no sources.
    expect(await view.frame.locator(".steps").isHidden()).toBe(true);
    expect(await view.frame.locator(".sources").isHidden()).toBe(true);
    await view.screenshot("error");
    expect(view.problems).toEqual([]);
    await view.page.close();
  });

  it("shows the text of a result that reaches it without structuredContent", async () => {
    const view = await mount();
    await view.toolInput({ question: QUESTION });
    const result = (await client.callTool({ name: "ask", arguments: { question: QUESTION } })) as any;
    await view.toolResult({ content: result.content });
    await view.frame.locator(".answer p").first().waitFor();
    expect(await text(view, ".answer")).toContain("Sources:");
    expect(await view.frame.locator(".source").count()).toBe(0);
    expect(view.problems).toEqual([]);
    await view.page.close();
  });

  it("renders an untrusted answer as text: no markup runs, a web link opens through the host, any other link stays text", async () => {
    const view = await mount();
    await view.toolInput({ question: QUESTION });
    const answer = 'Leave is 25 days [1] <img src="http://127.0.0.1:9/x" onerror="document.title=1"> — see [the policy](https://example.com/leave) or [this](javascript:alert(1)).';
    const source = { n: 1, filename: "handbook.md", title: "Leave", page: null, snippet: null, url: "urn:workspace-document:acme:handbook.md", cited: true, id: "wsrc_x" };
    await view.toolResult({ content: [{ type: "text", text: answer }], structuredContent: { answer, query_id: "q-1", mode: "ask", sources: [source], steps: [] } });
    await view.frame.locator(".answer p").waitFor();
    expect(await view.frame.locator(".answer img").count()).toBe(0);
    expect(await text(view, ".answer")).toContain('<img src="http://127.0.0.1:9/x"');
    expect(await view.frame.locator('.answer a[href^="javascript"]').count()).toBe(0);
    expect(await text(view, ".answer")).toContain("[this](javascript:alert(1))");
    await view.frame.locator(".answer a").click();
    await waitFor(async () => (await view.openedLinks()).length === 1, "the host was asked to open the link");
    expect(await view.openedLinks()).toEqual(["https://example.com/leave"]);
    // A source whose link names no web page has no "Open".
    expect(await view.frame.locator(".source .open").count()).toBe(0);
    expect(view.problems).toEqual([]);
    await view.page.close();
  });

  it("opens an answer's link through the host alone: a middle-click or Enter asks the host, and the link has no href to follow behind its back", async () => {
    const view = await mount();
    await view.toolInput({ question: QUESTION });
    const answer = "Leave is 25 days — see [the policy](https://example.com/leave).";
    await view.toolResult({ content: [{ type: "text", text: answer }], structuredContent: { answer, query_id: "q-1", mode: "ask", sources: [], steps: [] } });
    const link = view.frame.locator(".answer a");
    await link.waitFor();
    // No href: the browser has nothing to open in a new tab, a drag or a context menu.
    expect(await view.frame.locator(".answer a[href]").count()).toBe(0);
    expect(await link.getAttribute("role")).toBe("link");
    const pages = view.page.context().pages().length;
    await link.click({ button: "middle" });
    await waitFor(async () => (await view.openedLinks()).length === 1, "the host was asked to open the middle-clicked link");
    await link.focus();
    await view.page.keyboard.press("Enter");
    await waitFor(async () => (await view.openedLinks()).length === 2, "the host was asked to open the link from the keyboard");
    expect(await view.openedLinks()).toEqual(["https://example.com/leave", "https://example.com/leave"]);
    expect(view.page.context().pages().length).toBe(pages);
    expect(view.problems).toEqual([]);
    await view.page.close();
  });

  it("keeps host style values that could load something out of its CSS: url(), a CSS escape of it, other loading functions", async () => {
    const variables = {
      "--color-background-primary": "#101014",
      "--font-sans": "\\75 rl(https://fonts.example/escaped)",
      "--font-mono": "URL(https://fonts.example/upper)",
      "--color-text-primary": "a\nurl(https://fonts.example/after-a-line-break)",
      "--border-radius-md": "image-set('https://fonts.example/x.png' 1x)",
      "--shadow-sm": "0 1px 2px rgb(0 0 0 / 20%)",
    };
    const view = await mount({ theme: "dark", styles: { variables } });
    await view.frame.locator("#card").waitFor();
    const applied = await view.frame.evaluate((names: string[]) => names.map((name) => document.documentElement.style.getPropertyValue(name)), Object.keys(variables));
    expect(applied).toEqual(["#101014", "", "", "", "", "0 1px 2px rgb(0 0 0 / 20%)"]);
    expect(view.problems).toEqual([]);
    await view.page.close();
  });

  it("declares a policy that starts from nothing (default-src 'none'): a font is refused even where the host sets no policy", async () => {
    expect(card.html).toMatch(/default-src 'none'/);
    // The card on its own page, under its own policy alone.
    const page = await browser.newPage();
    await page.setContent(card.html);
    await page.locator('[role="alert"]').waitFor();
    const refused = await page.evaluate(async () => {
      const directives: string[] = [];
      document.addEventListener("securitypolicyviolation", (event: any) => directives.push(event.effectiveDirective));
      const font = new (globalThis as any).FontFace("probe", "url(data:font/woff2;base64,d09GMgABAAAAAA==)");
      await font.load().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 50));
      return directives;
    });
    expect(refused).toContain("font-src");
    await page.close();
  });

  it("says what it is when no host answers its handshake (the file opened on its own)", async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(error.message));
    await page.setContent(card.html);
    await page.locator('[role="alert"]').waitFor();
    expect(await page.locator('[role="alert"]').innerText()).toMatch(/inside an MCP Apps host/);
    expect(problems).toEqual([]);
    await page.close();
  });
});
