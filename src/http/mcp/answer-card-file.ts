import { readFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "../../util/package-info.js";

/** Where `scripts/build-answer-card.mjs` writes the card (one self-contained HTML file). */
const BUILT_CARD = "dist/mcp-app/answer-v1.html";

/**
 * The answer card's HTML (docs/mcp.md#the-answer-card), read once when the adapter starts; null
 * when it was not built (`npm run build` builds it, as it builds the playground): the tools then
 * link no card, as with `MCP_APPS=off`.
 */
export function readAnswerCard(root: string = projectRoot()): string | null {
  try {
    return readFileSync(join(root, BUILT_CARD), "utf8");
  } catch {
    return null;
  }
}
