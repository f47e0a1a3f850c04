import type { Browser } from "playwright-core";

/**
 * Gives consent in a real browser, as a person would: opens the authorization URL, types the
 * workspace key, picks the workspace, allows; resolves with the URL the browser was sent back to
 * (the client's own callback, which serves that page).
 */
export async function consentInBrowser(browser: Browser, authorizationUrl: string, key: string, workspace: string, callbackPrefix: string): Promise<URL> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(authorizationUrl);
    await page.fill('input[type="password"]', key);
    await page.click('button[value="continue"]');
    await page.check(`input[value="${workspace}"]`);
    await Promise.all([page.waitForURL((url) => url.href.startsWith(callbackPrefix), { timeout: 30_000 }), page.click('button[value="allow"]')]);
    return new URL(page.url());
  } finally {
    await context.close();
  }
}
