import { existsSync, readFileSync } from "node:fs";
import { dirname, relative, resolve, sep } from "node:path";

// The relative links of Markdown pages, checked as GitHub renders them: a link names a file that
// exists in the repository, and its `#anchor` a heading of that page by GitHub's anchor rules.

/**
 * What GitHub's anchors leave out of a heading's text (github-slugger's rule): other numbers,
 * punctuation but `-`, symbols, controls, format, private-use and unassigned characters, and
 * separators but the space, unless the character is alphabetic.
 */
const LEFT_OUT = new RegExp("[[\\p{No}\\p{Pd}\\p{Pe}\\p{Pf}\\p{Pi}\\p{Ps}\\p{Po}\\p{S}\\p{Cc}\\p{Cf}\\p{Co}\\p{Cn}\\p{Z}]--[\\p{Alphabetic} \\-]]", "gv");

/** The anchor GitHub gives a heading's rendered text (before numbering repeats). */
export function slugOf(text: string): string {
  return text.toLowerCase().replace(LEFT_OUT, "").replaceAll(" ", "-");
}

/** A heading's Markdown as GitHub renders its text: code spans literal, links and images their text, no HTML or emphasis. */
function renderedText(markdown: string): string {
  return markdown
    .split(/(`[^`]*`)/)
    .map((part, index) =>
      index % 2 === 1
        ? part.slice(1, -1)
        : part
            .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
            .replace(/<[^>]+>/g, "")
            .replace(/\*+/g, "")
            .replace(/\\(.)/g, "$1"),
    )
    .join("")
    .trim();
}

/** The page's lines outside fenced code blocks, with their line numbers. */
function proseLines(text: string): { line: string; number: number }[] {
  const lines: { line: string; number: number }[] = [];
  let fence: string | null = null;
  text.split("\n").forEach((line, index) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === null) {
      if (marker) fence = marker;
      else lines.push({ line, number: index + 1 });
    } else if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = null;
  });
  return lines;
}

/** Every anchor a page offers: its headings' slugs (a repeat numbered `-1`, `-2`, …) and explicit `id`/`name`s. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { line } of proseLines(text)) {
    for (const [, id] of line.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/g)) anchors.add(id as string);
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = slugOf(renderedText(heading));
    let unique = slug;
    while (seen.has(unique)) {
      const count = (seen.get(slug) ?? 0) + 1;
      seen.set(slug, count);
      unique = `${slug}-${count}`;
    }
    seen.set(unique, 0);
    anchors.add(unique);
  }
  return anchors;
}

/** The link targets of a page with their line numbers: inline links and images, reference definitions, HTML `href`/`src`. */
export function linksOf(text: string): { target: string; line: number }[] {
  const links: { target: string; line: number }[] = [];
  for (const { line, number } of proseLines(text)) {
    const prose = line.replace(/`[^`]*`/g, "``");
    const targets = [
      ...[...prose.matchAll(/\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)/g)].map((match) => (match[1] as string).replace(/^<|>$/g, "")),
      ...[...prose.matchAll(/^ {0,3}\[[^\]]+\]:\s*(\S+)/g)].map((match) => match[1] as string),
      ...[...prose.matchAll(/<(?:a|img|source)\s[^>]*(?:href|src)="([^"]+)"/g)].map((match) => match[1] as string),
    ];
    for (const target of targets) links.push({ target, line: number });
  }
  return links;
}

/**
 * What is wrong with the relative links of one page (a path relative to `root`): a file that does
 * not exist or lies outside the repository, or an anchor that no heading of its page has. Links
 * with a scheme (`https:`, `mailto:`) are not followed.
 */
export function linkProblems(root: string, page: string): string[] {
  const problems: string[] = [];
  const anchors = new Map<string, Set<string>>();
  const anchorsIn = (file: string) => anchors.get(file) ?? anchors.set(file, anchorsOf(readFileSync(file, "utf8"))).get(file) as Set<string>;
  const file = resolve(root, page);
  for (const { target, line } of linksOf(readFileSync(file, "utf8"))) {
    if (/^[a-z][a-z\d+.-]*:/i.test(target) || target.startsWith("//")) continue;
    const at = `${page}:${line}: ${target}`;
    const [path = "", anchor] = target.split("#", 2) as [string, string | undefined];
    const linked = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
    if (linked !== resolve(root) && !linked.startsWith(resolve(root) + sep)) problems.push(`${at}: outside the repository`);
    else if (!existsSync(linked)) problems.push(`${at}: no file ${relative(root, linked)}`);
    else if (anchor !== undefined && linked.endsWith(".md") && !anchorsIn(linked).has(decodeURIComponent(anchor)))
      problems.push(`${at}: no heading #${anchor} in ${relative(root, linked)}`);
  }
  return problems;
}
