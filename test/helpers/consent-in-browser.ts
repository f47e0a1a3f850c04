import type { Browser } from "playwright-core";

/**
 * Gives consent in a real browser, as a person would: opens the authorization URL, types the
 * workspace key, picks the workspace, allows; resolves with the URL the browser was sent back to
 * (the client's own callback).
 */
export async function consentInBrowser(browser: Browser, authorizationUrl: string, key: string, workspace: string, callbackPrefix: string): Promise<URL> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(authorizationUrl);
    await page.fill('input[type="password"]', key);
    await page.click('button[value="continue"]');
    await page.check(`input[value="${workspace}"]`);
    const sentBack = page.waitForRequest((request) => request.isNavigationRequest() && request.url().startsWith(callbackPrefix), { timeout: 30_000 });
    await page.click('button[value="allow"]');
    const request = await sentBack;
    // The browser's arrival is what counts: a client that closes its callback listener as soon as
    // it has the code (the conformance suite's does) can leave the page itself unloaded, and
    // Chromium's retry of that GET then finds no listener (ERR_CONNECTION_REFUSED). Whether the
    // client got the code is for the caller to check (its exit, its token).
    await request.response();
    return new URL(request.url());
  } finally {
    await context.close();
  }
}
