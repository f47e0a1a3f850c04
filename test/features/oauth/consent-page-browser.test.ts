import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startBrowser } from "../../helpers/browser.js";
import { CHROMIUM, describeWith } from "../../helpers/external-programs.js";
import { HandDrivenClient, pkcePair, REDIRECT_URI } from "../../helpers/oauth-client.js";
import { API_KEY, type Stack, startStack } from "../../helpers/start-stack.js";

// Functions passed to the page run in the browser; this project's types are Node's.
declare const document: any;
declare const window: any;

describeWith(CHROMIUM, "the OAuth consent page, in a real browser", () => {
  let stack: Stack;
  let browser: Browser;
  beforeAll(async () => {
    stack = await startStack({ MCP_OAUTH: "on" });
    browser = await startBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it("on a phone, without JavaScript: key, then workspace, then back to the client with a code that redeems", async () => {
    const client = await new HandDrivenClient(stack.url).register({ client_name: "Phone <b>Client</b>" });
    const { verifier, challenge } = pkcePair();
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 375, height: 740 }, isMobile: true });
    const page = await context.newPage();
    let callback: URL | undefined;
    await page.route(`${REDIRECT_URI}**`, async (route) => {
      callback = new URL(route.request().url());
      await route.fulfill({ status: 200, contentType: "text/plain", body: "back at the client" });
    });
    try {
      await page.goto(client.authorizationUrl(challenge).href);
      // It names the client (as text, never as markup) and where the browser goes back to.
      await expect.poll(() => page.locator("main").innerText(), { timeout: 15_000 }).toContain("Phone <b>Client</b>");
      expect(await page.locator("main").innerText()).toContain("127.0.0.1:8976");
      // Readable on a phone: nothing wider than the screen.
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      // A wrong key first: a clear message, still on the page.
      await page.fill('input[type="password"]', "sk-wrong-key");
      await page.click('button[value="continue"]');
      await expect.poll(() => page.locator('[role="alert"]').innerText(), { timeout: 15_000 }).toContain("did not accept this key");
      expect(callback).toBeUndefined();
      await page.fill('input[type="password"]', API_KEY);
      await page.click('button[value="continue"]');
      await page.check('input[value="globex"]');
      await page.click('button[value="allow"]');
      await expect.poll(() => callback?.href ?? "", { timeout: 15_000 }).toContain("code=");
    } finally {
      await context.close();
    }
    const url = callback as URL;
    expect(url.searchParams.get("iss")).toBe(`${stack.url}/oauth`);
    expect(url.searchParams.get("state")).toBe("state-1");
    const tokens = await client.exchange(url.searchParams.get("code") as string, verifier);
    expect(tokens.status).toBe(200);
    expect((await client.listTools(tokens.body.access_token)).status).toBe(200);
  });
});
