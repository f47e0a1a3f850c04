import { isObject } from "./host-bridge.js";

/** The host's theming variables the card reads (MCP Apps' standard names); others are ignored. */
const VARIABLE = /^--(?:color|font|border|shadow)-[a-z0-9-]+$/;
/** A value that cannot reach the network or break out of its declaration (no `url(`, no braces or semicolons). */
const SAFE_VALUE = /^(?!.*url\s*\()[^{};<>]{1,200}$/i;

/**
 * Follows the host's context (MCP Apps `hostContext`): its theme (`light`/`dark`, else the
 * system's), its standard style variables (`--color-…`, `--font-…`, …; the card's own colours are
 * their fallbacks), and a fixed or bounded height for the frame.
 */
export function applyHostContext(root: HTMLElement, context: Record<string, unknown>): void {
  const { theme } = context;
  if (theme === "light" || theme === "dark") {
    root.dataset.theme = theme;
  }
  const styles = isObject(context.styles) ? context.styles : {};
  const variables = isObject(styles.variables) ? styles.variables : {};
  for (const [name, value] of Object.entries(variables)) {
    if (VARIABLE.test(name) && typeof value === "string" && SAFE_VALUE.test(value)) root.style.setProperty(name, value);
  }
  const dimensions = isObject(context.containerDimensions) ? context.containerDimensions : {};
  if (typeof dimensions.height === "number") {
    root.style.height = "100vh";
    root.dataset.fixedHeight = "";
  } else if (typeof dimensions.maxHeight === "number") {
    root.style.maxHeight = `${dimensions.maxHeight}px`;
  }
}
