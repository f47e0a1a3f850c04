import { isObject } from "./host-bridge.js";

/** The host's theming variables the card reads (MCP Apps' standard names); others are ignored. */
const VARIABLE = /^--(?:color|font|border|shadow)-[a-z0-9-]+$/;
/**
 * A value that cannot break out of its declaration nor reach the network: printable, without braces,
 * semicolons, angle brackets or backslashes (a CSS escape, `\75 rl(`, would spell `url(` past any
 * check of the text), and calling no function that loads something (`url(`, `image-set(`, …).
 */
const SAFE_VALUE = /^[^{};<>\\]{1,200}$/;
/** A control character (a line break among them). */
const CONTROL = /\p{Cc}/u;
/** A CSS function that loads a resource, however its name is cased. */
const LOADS = /(?:^|[^a-z0-9_-])(?:url|src|image|image-set|-webkit-image-set|cross-fade|element)\s*\(/i;

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
    if (VARIABLE.test(name) && typeof value === "string" && SAFE_VALUE.test(value) && !CONTROL.test(value) && !LOADS.test(value)) {
      root.style.setProperty(name, value);
    }
  }
  const dimensions = isObject(context.containerDimensions) ? context.containerDimensions : {};
  if (typeof dimensions.height === "number") {
    root.style.height = "100vh";
    root.dataset.fixedHeight = "";
  } else if (typeof dimensions.maxHeight === "number") {
    root.style.maxHeight = `${dimensions.maxHeight}px`;
  }
}
