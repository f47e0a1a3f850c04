import { type Browser, chromium } from "playwright-core";
import { chromiumPath } from "./external-programs.js";

/**
 * Starts Debian's Chromium headless through playwright-core (a fresh temporary profile, which
 * Playwright makes), with no sandbox (tests may run as root) and no background traffic of its own
 * (the machine's network is closed).
 */
export function startBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}
