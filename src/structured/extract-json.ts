/** The JSON value found at the start of an answer, and the text that followed it (`Sources:` and the like). */
export type ExtractedJson = { found: true; value: unknown; text: string; rest: string } | { found: false; reason: string };

const FENCE_OPEN = /^```(?:json|JSON)?[ \t]*\r?\n/;

/**
 * Takes out the first top-level JSON value of the workspace's output
 * (docs/structured-answers.md#what-comes-back): white space, then a value, then anything (the
 * `Sources:` list the workspace appends); or the same inside a ```` ```json ```` fence, with
 * anything after the closing fence. Nothing looser: prose before the value, a value cut short, or
 * JSON that does not parse is not found (and the repair turn asks again). The value's text is
 * returned as written, so that citations can point into it.
 */
export function extractJson(output: string): ExtractedJson {
  let text = output.trimStart();
  let fenced = false;
  const fence = FENCE_OPEN.exec(text);
  if (fence) {
    text = text.slice(fence[0].length).trimStart();
    fenced = true;
  }
  const first = text[0];
  if (first !== "{" && first !== "[") {
    return { found: false, reason: text.length === 0 ? "the answer is empty" : "the answer does not start with a JSON object or array" };
  }
  const end = endOfValue(text);
  if (end < 0) return { found: false, reason: "the JSON value is not closed" };
  const json = text.slice(0, end);
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    return { found: false, reason: `the JSON does not parse (${error instanceof Error ? error.message : "invalid"})` };
  }
  let rest = text.slice(end);
  if (fenced) {
    const close = /^\s*```/.exec(rest);
    if (!close) return { found: false, reason: "the code fence around the JSON is not closed after it" };
    rest = rest.slice(close[0].length);
  }
  return { found: true, value, text: json, rest };
}

/**
 * The end (exclusive) of the object or array that opens `text`: brackets counted outside strings,
 * escapes honoured; -1 when it never closes. Linear, and whether it is JSON is `JSON.parse`'s to say.
 */
function endOfValue(text: string): number {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index];
    if (inString) {
      if (char === "\\") index += 1;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    else if (char === "{" || char === "[") depth += 1;
    else if (char === "}" || char === "]") {
      depth -= 1;
      if (depth === 0) return index + 1;
    }
  }
  return -1;
}
