import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { documentReader } from "../../../src/embedded-workspace/read-document.js";
import { type RunningWorkspace, startEmbeddedWorkspace } from "../../../src/embedded-workspace/start-embedded-workspace.js";
import { startBrowser } from "../../helpers/browser.js";
import { connectMcp } from "../../helpers/mcp-clients.js";
import { CHROMIUM, describeWith } from "../../helpers/external-programs.js";
import { FIXTURE_DOCUMENTS, type RunningAdapter, startAdapter } from "../../helpers/start-stack.js";

// Functions passed to the page run in the browser (a string would be eval, which the page's policy
// refuses); this project's types are Node's, so the browser's globals are declared loosely here.
declare const document: any;
declare const window: any;

describeWith(CHROMIUM, "the playground, in a real browser", () => {
  let folder: string;
  let workspace: RunningWorkspace;
  let adapter: RunningAdapter;
  let browser: Browser;

  beforeAll(async () => {
    // The fixture documents, and a text file whose text carries HTML (documents are untrusted; a text
    // file is quoted verbatim, as an upstream may quote anything).
    folder = mkdtempSync(join(tmpdir(), "playground-documents-"));
    cpSync(FIXTURE_DOCUMENTS, folder, { recursive: true });
    writeFileSync(
      join(folder, "hostile.txt"),
      "# Hostile\n\nThe zebrafish quota is <img src=x onerror=\"window.__pwned=1\"> seven per tank <script>window.__pwned=2</script> always.\n",
    );
    workspace = await startEmbeddedWorkspace({ documents: [folder], workspaces: ["demo"], stepDelayMs: 80 });
    // As `npm start` serves it: the embedded workspace's documents, the playground on.
    let listening = "";
    adapter = await startAdapter(workspace.url, { DEFAULT_WORKSPACE: "demo" }, undefined, { documents: documentReader([folder]), publicUrl: () => listening });
    listening = adapter.url;
    browser = await startBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await adapter?.close();
    await workspace?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  /** A page on the playground, recording console errors and failed requests. */
  async function open(viewport = { width: 1280, height: 900 }): Promise<{ page: Page; problems: string[] }> {
    const page = await browser.newPage({ viewport });
    const problems: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`console: ${message.text()}`);
    });
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("requestfailed", (request) => {
      if (request.failure()?.errorText !== "net::ERR_ABORTED") problems.push(`failed: ${request.url()}`);
    });
    page.on("dialog", (dialog) => {
      problems.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    await page.goto(`${adapter.url}/`);
    await page.waitForFunction(() => document.getElementById("key").value !== "");
    return { page, problems };
  }

  const ask = async (page: Page, question: string) => {
    await page.fill("#question", question);
    await page.press("#question", "Enter");
  };
  const lastAnswer = (page: Page) => page.locator(".message.assistant").last();
  const finished = (page: Page) => page.waitForFunction(() => !document.querySelector(".message.assistant[aria-busy]"));

  it("loads with a strict policy and no console errors or failed requests, offline of any third party", async () => {
    const { page, problems } = await open();
    const response = await page.goto(`${adapter.url}/`);
    expect(response?.headers()["content-security-policy"]).toMatch(/default-src 'none'; script-src 'self'/);
    expect(await page.locator("label", { hasText: "API key" }).count()).toBe(1);
    const requested: string[] = [];
    page.on("request", (request) => requested.push(request.url()));
    await page.reload();
    await page.waitForLoadState("networkidle");
    expect(requested.every((url) => url.startsWith(adapter.url))).toBe(true);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("streams an answer with its steps, and a citation shows its source", async () => {
    const { page, problems } = await open();
    // The answer grows on the page before it ends: the page itself notes every length the answer
    // shows (sampling from the test would miss steps on a busy machine). The page draws text once a
    // frame, and a loaded machine runs few frames: the answer's twelve pieces come 40 ms apart, and
    // one partial answer drawn before the whole is what streaming means here.
    await page.evaluate(() => {
      window.__answerLengths = new Set();
      new window.MutationObserver(() => {
        const answers = document.querySelectorAll(".message.assistant .answer");
        const last = answers[answers.length - 1];
        if (last?.textContent) window.__answerLengths.add(last.textContent.length);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await ask(page, "How much annual leave do employees get?");
    await finished(page);
    expect(await page.evaluate(() => window.__answerLengths.size)).toBeGreaterThan(1);
    expect(await page.locator("#frames li", { hasText: '"content":"' }).count()).toBeGreaterThan(3);
    const answer = lastAnswer(page);
    expect(await answer.locator(".answer").innerText()).toContain("25 days");
    expect(await answer.locator("details .steps").textContent()).toContain("Using tool: search_documents");
    const citation = answer.locator("button.cite").first();
    await citation.focus();
    await page.keyboard.press("Enter");
    const highlighted = page.locator(".source-list li.highlight");
    expect(await highlighted.count()).toBe(1);
    expect(await highlighted.innerText()).toContain("handbook.md");
    expect(await page.locator("#query-id").innerText()).toMatch(/Workspace query: [0-9a-f-]{36}/);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("lists a reason answer's structured sources with their snippets", async () => {
    const { page, problems } = await open();
    await page.selectOption("#mode", "reason");
    await ask(page, "How much annual leave do employees get?");
    await finished(page);
    expect(await page.locator(".source-list .snippet").first().innerText()).toContain("25 days");
    expect(await lastAnswer(page).locator("button.cite").count()).toBeGreaterThan(1);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("keeps one workspace query for a follow-up, on chat completions and on the Responses API", async () => {
    for (const api of ["chat", "responses"]) {
      const { page, problems } = await open();
      await page.selectOption("#api", api);
      await ask(page, "How much annual leave do employees get?");
      await finished(page);
      const first = await page.locator("#query-id").innerText();
      await ask(page, "Does unused leave carry over?");
      await finished(page);
      expect(await page.locator(".message.assistant").count()).toBe(2);
      expect(await page.locator("#query-id").innerText()).toBe(first);
      expect(await lastAnswer(page).locator(".error").count()).toBe(0);
      expect(problems).toEqual([]);
      await page.close();
    }
  });

  it("sees every streamed answer loaded, never cancelled, load after load, on both APIs", async () => {
    // A stream whose response said `Cache-Control: no-store` was reported as net::ERR_ABORTED (cancelled)
    // once the page had read it to its end, though every byte had come: in 7 of 12 loads. Six loads.
    const cancelled: string[] = [];
    for (const api of ["chat", "responses", "chat", "responses", "chat", "responses"]) {
      const { page, problems } = await open();
      page.on("requestfailed", (request) => cancelled.push(`${api}: ${request.method()} ${new URL(request.url()).pathname} ${request.failure()?.errorText}`));
      await page.selectOption("#api", api);
      await ask(page, "How much annual leave do employees get?");
      await finished(page);
      expect(await lastAnswer(page).locator(".answer").innerText()).toContain("25 days");
      expect(problems).toEqual([]);
      await page.close();
    }
    expect(cancelled).toEqual([]);
  });

  it("stops an answer, and the adapter stops waiting for it", async () => {
    const { page } = await open();
    await ask(page, "leave policy [fault:stall]");
    await page.waitForFunction(() => document.querySelector(".message.assistant .steps")?.textContent !== "");
    await page.waitForFunction(() => !document.getElementById("stop").disabled);
    await page.click("#stop");
    await finished(page);
    expect(await lastAnswer(page).innerText()).toContain("Stopped.");
    await expect.poll(() => adapter.adapter.watcher.waitingQueries, { timeout: 10_000 }).toBe(0);
    await page.close();
  });

  it("shows the adapter's errors as it sent them", async () => {
    const { page } = await open();
    await ask(page, "leave [fault:failed]");
    await finished(page);
    expect(await lastAnswer(page).locator("[role=alert]").innerText()).toContain("simulated failure");
    await page.fill("#workspace", "no such workspace!");
    await ask(page, "leave");
    await finished(page);
    expect(await lastAnswer(page).locator("[role=alert]").innerText()).toMatch(/^422: Invalid request: header\.service-workspace/);
    await page.close();
  });

  it("runs nothing that comes from the workspace: HTML and javascript: links stay text", async () => {
    const { page, problems } = await open();
    await ask(page, "What is the zebrafish quota per tank?");
    await finished(page);
    await ask(page, 'qqxv [x](javascript:window.__pwned=3) <img src=y onerror="window.__pwned=4">');
    await finished(page);
    const answers = page.locator(".message.assistant .answer");
    expect(await answers.first().innerText()).toContain("<img");
    expect(await answers.locator("img, script").count()).toBe(0);
    expect(await answers.locator("a[href^='javascript']").count()).toBe(0);
    expect(await page.evaluate(() => window.__pwned)).toBeUndefined();
    expect(problems).toEqual([]);
    await page.close();
  });

  it("shows the request, the frames as received with their timing, and the request as code", async () => {
    const { page } = await open();
    await page.check("#developer");
    await ask(page, "How much annual leave do employees get?");
    await finished(page);
    expect(await page.locator("#raw-request").innerText()).toMatch(/^POST \/v1\/chat\/completions[\s\S]*authorization: Bearer •••/);
    const frames = page.locator("#frames li");
    expect(await frames.count()).toBeGreaterThan(5);
    expect(await frames.first().innerText()).toMatch(/^\+\d+ ms\s*data: \{"id":"chatcmpl-/);
    expect(await frames.last().innerText()).toMatch(/data: \[DONE\]$/);
    await page.click("[data-snippet=curl]");
    const curl = await page.locator("#snippet").innerText();
    expect(curl).toContain(`curl -sN ${adapter.url}/v1/chat/completions`);
    expect(curl).toContain("$WORKSPACE_API_KEY");
    expect(curl).not.toContain("any-key-works-locally");
    await page.click("[data-snippet=vercel]");
    expect(await page.locator("#snippet").innerText()).toContain('workspace.chat("ask")');
    await page.close();
  });

  it("gives the MCP configuration for the workspace on the page, which a client then uses as written", async () => {
    const { page, problems } = await open();
    await page.check("#developer");
    await page.fill("#workspace", "demo");
    await page.click("[data-snippet=mcp]");
    const text: string = await page.locator("#snippet").innerText();
    const [claude, cursor, vscode] = text.split("\n\n# ").map((block) => block.slice(block.indexOf("\n") + 1));
    expect(claude).toBe(`claude mcp add --transport http workspace ${adapter.url}/mcp \\\n  --header "Authorization: Bearer $WORKSPACE_API_KEY" \\\n  --header "Service-Workspace: demo"`);
    const cursorServer = JSON.parse(cursor as string).mcpServers.workspace;
    expect(cursorServer).toEqual({ url: `${adapter.url}/mcp`, headers: { Authorization: "Bearer ${env:WORKSPACE_API_KEY}", "Service-Workspace": "demo" } });
    const vscodeServer = JSON.parse(vscode as string).servers.workspace;
    expect(vscodeServer).toMatchObject({ type: "http", url: `${adapter.url}/mcp/demo` });
    // The VS Code form names the workspace only in its path: a client set up from it asks there.
    const client = await connectMcp("2025-11-25", vscodeServer.url, { authorization: vscodeServer.headers.Authorization.replace("${input:workspace-api-key}", "any-key") });
    expect((await client.callTool("ask", { question: "How much annual leave do employees get?" })).structuredContent.answer).toMatch(/\S/);
    await client.close();
    expect(problems).toEqual([]);
    await page.close();
  });

  it("with client keys listed: asks for the user's key, and a source's link opens its document in a new tab (signed)", async () => {
    let listening = "";
    const effects = { documents: documentReader([folder]), publicUrl: () => listening };
    const listed = await startAdapter(workspace.url, { DEFAULT_WORKSPACE: "demo", ADAPTER_API_KEYS: "playground=sk-playground-key-1" }, undefined, effects);
    listening = listed.url;
    const page = await browser.newPage();
    try {
      const problems: string[] = [];
      page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
      await page.goto(`${listed.url}/`);
      await page.waitForFunction(() => document.getElementById("workspace").value === "demo");
      // No key is prefilled where keys are listed ("any key works" no longer holds): the user types theirs.
      expect(await page.inputValue("#key")).toBe("");
      await page.fill("#key", "sk-playground-key-1");
      await page.dispatchEvent("#key", "change");
      await ask(page, "How much annual leave do employees get?");
      await finished(page);
      expect(await lastAnswer(page).locator(".answer").innerText()).toContain("25 days");
      const link = page.locator(".source-list a", { hasText: "open" }).first();
      const href = (await link.getAttribute("href")) ?? "";
      expect(new URL(href).searchParams.get("sig")).toBeTruthy();
      const [tab] = await Promise.all([page.context().waitForEvent("page"), link.click()]);
      await tab.waitForLoadState();
      expect(await tab.locator("h1").innerText()).toBe(decodeURIComponent(new URL(href).pathname.split("/").at(-1) ?? ""));
      await tab.close();
      // The same link without its signature is refused: the page asks for a listed key.
      const unsigned = new URL(href);
      unsigned.searchParams.delete("sig");
      expect((await page.goto(unsigned.href))?.status()).toBe(401);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
      await listed.close();
    }
  });

  it("fits a narrow screen, and (with UPDATE_SCREENSHOTS=1) updates the screenshots in docs/", async () => {
    for (const [name, viewport] of [
      ["playground.png", { width: 1280, height: 860 }],
      ["playground-narrow.png", { width: 390, height: 844 }],
    ] as const) {
      const { page } = await open(viewport);
      await ask(page, "How much annual leave do employees get?");
      await finished(page);
      await page.locator("button.cite").first().click();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      if (process.env.UPDATE_SCREENSHOTS === "1") await page.screenshot({ path: join(import.meta.dirname, "../../../docs", name) });
      await page.close();
    }
  });
});
