/**
 * A deliberately small Markdown renderer for answers, which come from workspace documents and are
 * untrusted: it builds DOM nodes with text content only (never HTML from the answer), knows
 * paragraphs, headings, lists, block quotes, fenced and inline code, emphasis and links, and only
 * makes links whose URL is http(s). Citation markers become buttons the caller wires.
 */

/** A citation marker found in the text: its code-point span, for matching with annotations. */
export interface MarkerSpan {
  start: number;
  end: number;
  text: string;
}

/** Makes the element of a citation marker (a button when the marker is known, else plain text). */
export type MarkerFactory = (marker: MarkerSpan) => Node;

const MARKER = /^(?:【[^】\n]{1,300}】|\[\^?\d{1,4}(?:\s*[,;–-]\s*\d{1,4})*\]|\[[^[\]\n]{1,300}\.[A-Za-z][A-Za-z0-9]{0,7}(?:[^[\]\n]{0,40})\])/;
const SAFE_URL = /^https?:\/\//i;

/** Renders `text` into `container` (emptied first). */
export function renderMarkdown(container: HTMLElement, text: string, marker: MarkerFactory): void {
  container.replaceChildren();
  const lines = text.split("\n");
  // Code points before each line, so markers know where they are in the whole text.
  const lineStarts: number[] = [];
  let position = 0;
  for (const line of lines) {
    lineStarts.push(position);
    position += [...line].length + 1;
  }
  let index = 0;
  let list: HTMLElement | null = null;
  let paragraph: HTMLElement | null = null;
  const closeBlocks = () => {
    list = null;
    paragraph = null;
  };
  while (index < lines.length) {
    const line = lines[index] as string;
    const start = lineStarts[index] as number;
    if (line.trimStart().startsWith("```")) {
      closeBlocks();
      const pre = document.createElement("pre");
      const code = document.createElement("code");
      const body: string[] = [];
      index += 1;
      while (index < lines.length && !(lines[index] as string).trimStart().startsWith("```")) body.push(lines[index++] as string);
      index += 1;
      code.textContent = body.join("\n");
      pre.append(code);
      container.append(pre);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const bullet = /^\s*(?:[-*+]|(\d{1,9})[.)])\s+(.*)$/.exec(line);
    if (line.trim() === "") {
      closeBlocks();
    } else if (heading) {
      closeBlocks();
      const element = document.createElement(`h${Math.min(6, (heading[1] as string).length + 2)}`);
      appendInline(element, heading[2] as string, start + (heading[0].length - (heading[2] as string).length), marker);
      container.append(element);
    } else if (bullet) {
      paragraph = null;
      const ordered = bullet[1] !== undefined;
      const current = list as HTMLElement | null;
      if (!current || (current.tagName === "OL") !== ordered) {
        list = document.createElement(ordered ? "ol" : "ul");
        container.append(list);
      }
      const item = document.createElement("li");
      appendInline(item, bullet[2] as string, start + [...line].length - [...(bullet[2] as string)].length, marker);
      (list as HTMLElement).append(item);
    } else if (line.startsWith(">")) {
      closeBlocks();
      const quote = document.createElement("blockquote");
      appendInline(quote, line.replace(/^>\s?/, ""), start + (line.length - line.replace(/^>\s?/, "").length), marker);
      container.append(quote);
    } else {
      list = null;
      if (!paragraph) {
        paragraph = document.createElement("p");
        container.append(paragraph);
      } else {
        paragraph.append(document.createElement("br"));
      }
      appendInline(paragraph, line, start, marker);
    }
    index += 1;
  }
}

/** Inline Markdown: code spans, links, strong and emphasis, citation markers; everything else is text. */
function appendInline(parent: HTMLElement, text: string, offset: number, marker: MarkerFactory): void {
  let plain = "";
  let at = 0; // UTF-16 index into `text`
  let point = offset; // code-point position in the whole answer
  const flush = () => {
    if (plain) parent.append(document.createTextNode(plain));
    plain = "";
  };
  const advance = (matched: string) => {
    at += matched.length;
    point += [...matched].length;
  };
  while (at < text.length) {
    const rest = text.slice(at);
    const code = /^`([^`]+)`/.exec(rest);
    const link = code ? null : /^\[([^[\]\n]{1,300})\]\(([^()\s]{1,2000})\)/.exec(rest);
    const cite = code || link ? null : MARKER.exec(rest);
    const strong = /^\*\*([^*\n]+)\*\*/.exec(rest);
    const emphasis = /^\*([^*\n]+)\*/.exec(rest) ?? /^_([^_\n]+)_/.exec(rest);
    const element = (tag: string, content: string) => {
      const node = document.createElement(tag);
      node.textContent = content;
      return node;
    };
    if (code) {
      flush();
      parent.append(element("code", code[1] as string));
      advance(code[0]);
    } else if (link) {
      const url = link[2] as string;
      const label = link[1] as string;
      const labelMarker = MARKER.exec(`[${label}]`);
      flush();
      if (labelMarker && labelMarker[0].length === label.length + 2) {
        // A citation marker that is also a link (the Markdown citation style): the marker, then the link.
        parent.append(marker({ start: point, end: point + [...label].length + 2, text: `[${label}]` }));
        if (SAFE_URL.test(url)) parent.append(anchor(url, "↗"));
        else parent.append(document.createTextNode(`(${url})`));
      } else if (SAFE_URL.test(url)) {
        parent.append(anchor(url, label));
      } else {
        // Not a web link (javascript:, data:, …): shown as the text it is, never followed.
        parent.append(document.createTextNode(link[0]));
      }
      advance(link[0]);
    } else if (cite) {
      flush();
      parent.append(marker({ start: point, end: point + [...cite[0]].length, text: cite[0] }));
      advance(cite[0]);
    } else if (strong) {
      flush();
      parent.append(element("strong", strong[1] as string));
      advance(strong[0]);
    } else if (emphasis) {
      flush();
      parent.append(element("em", emphasis[1] as string));
      advance(emphasis[0]);
    } else {
      const char = String.fromCodePoint(text.codePointAt(at) as number);
      plain += char;
      advance(char);
    }
  }
  flush();
}

function anchor(url: string, label: string): HTMLAnchorElement {
  const element = document.createElement("a");
  element.href = url;
  element.textContent = label;
  element.target = "_blank";
  element.rel = "noopener noreferrer";
  return element;
}
