import { type MarkerSpan, renderMarkdown } from "../playground/markdown.js";
import { type CardResult, type CardSource, type SourceText, sourceOfMarker } from "./tool-result.js";

/** What the card asks of its host; an action the host does not offer is undefined (the card then shows less). */
export interface CardActions {
  /** Reads a source's text (`fetch`, through the host). */
  readSource?: ((id: string) => Promise<SourceText | { error: string }>) | undefined;
  /** Asks the host to open an http(s) link. */
  openLink?: ((url: string) => Promise<void>) | undefined;
}

const WEB_LINK = /^https?:\/\//i;

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * Turns the rendered answer's links into links only the host opens: the URL moves from `href`
 * (which the browser follows on its own: a middle-click, "open in new tab", a drag) to `data-url`,
 * read by the card's own handlers, which ask the host (`ui/open-link`). Still a link to assistive
 * technology and the keyboard (`role`, `tabindex`).
 */
function hostLinks(root: HTMLElement): void {
  for (const link of root.querySelectorAll<HTMLAnchorElement>("a[href]")) {
    link.dataset.url = link.href;
    link.removeAttribute("href");
    link.setAttribute("role", "link");
    link.tabIndex = 0;
    link.title = link.dataset.url;
  }
}

/**
 * The answer card (docs/mcp.md#the-answer-card): the question while the workspace works, then the
 * answer (its Markdown rendered as text nodes only, its markers linked to the sources), the steps
 * (collapsed) and the sources, each readable in place. Everything shown comes from the tool's
 * input and result, or from `fetch` through the host.
 */
export class AnswerCard {
  private readonly parts = {
    tool: element("span", "tool"),
    question: element("p", "question"),
    status: element("p", "status"),
    answer: element("div", "answer"),
    steps: element("details", "steps"),
    sources: element("section", "sources"),
    queryId: element("p", "query-id"),
  };
  private sources: CardSource[] = [];
  private readonly items = new Map<number, HTMLLIElement>();

  constructor(
    root: HTMLElement,
    private readonly actions: CardActions,
  ) {
    const header = element("header");
    header.append(this.parts.tool, this.parts.question);
    // A link in the answer opens through the host alone (`ui/open-link`): it has no href (`hostLinks`),
    // so no middle-click, context menu or drag opens it behind the host's back; a click, a middle-click
    // or Enter asks the host.
    const follow = (event: Event) => {
      const link = event.target instanceof Element ? event.target.closest("a[data-url]") : null;
      if (!(link instanceof HTMLElement)) return;
      event.preventDefault();
      const url = link.dataset.url ?? "";
      if (WEB_LINK.test(url)) void this.actions.openLink?.(url).catch(() => undefined);
    };
    this.parts.answer.addEventListener("click", follow);
    this.parts.answer.addEventListener("auxclick", (event) => {
      if (event.button === 1) follow(event);
    });
    this.parts.answer.addEventListener("keydown", (event) => {
      if (event.key === "Enter") follow(event);
    });
    this.parts.status.setAttribute("role", "status");
    root.replaceChildren(header, this.parts.status, this.parts.answer, this.parts.steps, this.parts.sources, this.parts.queryId);
    // Nothing of an answer until its result.
    this.parts.steps.hidden = true;
    this.parts.sources.hidden = true;
    this.working(undefined);
  }

  /** Names the tool the card shows (`ask`, `reason`, `build`). */
  tool(name: string | undefined): void {
    this.parts.tool.textContent = name ?? "";
    this.parts.tool.hidden = !name;
  }

  /** The question (the call's arguments), and that the workspace is working on it. */
  working(question: string | undefined): void {
    this.parts.question.textContent = question ?? "";
    this.parts.question.hidden = !question;
    this.status(question ? "Working on it…" : "Waiting for the question…", "busy");
  }

  /** The view cannot work: no host answered its handshake. */
  alone(message: string): void {
    this.status(message, "error");
  }

  /** The call was cancelled before its answer came. */
  cancelled(reason: string | undefined): void {
    this.status(reason ? `Cancelled: ${reason}` : "Cancelled.", "cancelled");
  }

  /** The call's result: an answer, a text, or an error. */
  result(result: CardResult): void {
    if (result.kind === "error") {
      this.status(result.message, "error");
      return;
    }
    if (result.kind === "text") {
      this.status("", "done");
      renderMarkdown(this.parts.answer, result.text, (marker) => document.createTextNode(marker.text));
      hostLinks(this.parts.answer);
      return;
    }
    this.status("", "done");
    this.sources = result.sources;
    if (result.mode) this.tool(result.mode);
    renderMarkdown(this.parts.answer, result.answer, (marker) => this.markerButton(marker));
    hostLinks(this.parts.answer);
    this.showSteps(result.steps);
    this.showSources(result.sources);
    this.parts.queryId.textContent = result.queryId ? `query_id: ${result.queryId}` : "";
  }

  private status(text: string, state: "busy" | "done" | "cancelled" | "error"): void {
    this.parts.status.textContent = text;
    this.parts.status.hidden = text === "";
    this.parts.status.dataset.state = state;
    this.parts.status.setAttribute("role", state === "error" ? "alert" : "status");
  }

  /** A citation marker: a button that opens its source, or plain text when it points at none. */
  private markerButton(marker: MarkerSpan): Node {
    const source = sourceOfMarker(marker.text, this.sources);
    if (!source) return document.createTextNode(marker.text);
    const button = element("button", "cite", marker.text);
    button.type = "button";
    button.setAttribute("aria-label", `Source ${source.n}: ${describe(source)}`);
    button.addEventListener("click", () => this.openSource(source.n, true));
    return button;
  }

  private showSteps(steps: string[]): void {
    const list = element("ol");
    for (const step of steps) list.append(element("li", undefined, step));
    this.parts.steps.replaceChildren(element("summary", undefined, `Steps (${steps.length})`), list);
    this.parts.steps.open = false;
    this.parts.steps.hidden = steps.length === 0;
  }

  private showSources(sources: CardSource[]): void {
    this.items.clear();
    const list = element("ol", "source-list");
    for (const source of sources) {
      const item = element("li", "source");
      item.id = `source-${source.n}`;
      item.dataset.n = String(source.n);
      const toggle = element("button", "source-toggle");
      toggle.type = "button";
      toggle.setAttribute("aria-expanded", "false");
      toggle.append(element("span", "n", `[${source.n}]`), element("span", "title", source.title ?? source.filename ?? "Source"));
      const place = [source.title && source.filename ? source.filename : "", source.page === null ? "" : `p. ${source.page}`].filter(Boolean).join(", ");
      if (place) toggle.append(element("span", "place", place));
      toggle.append(element("span", `badge ${source.cited ? "cited" : "uncited"}`, source.cited ? "cited" : "not cited"));
      toggle.addEventListener("click", () => this.openSource(source.n, false));
      item.append(toggle);
      if (source.snippet) item.append(element("blockquote", "excerpt", source.snippet));
      const body = element("div", "document");
      body.hidden = true;
      item.append(body);
      const { openLink } = this.actions;
      if (openLink && WEB_LINK.test(source.url)) {
        const open = element("button", "open", "Open");
        open.type = "button";
        open.setAttribute("aria-label", `Open ${describe(source)}`);
        open.addEventListener("click", () => void openLink(source.url).catch(() => undefined));
        item.append(open);
      }
      this.items.set(source.n, item);
      list.append(item);
    }
    this.parts.sources.replaceChildren(element("h2", undefined, `Sources (${sources.length})`), list);
    this.parts.sources.hidden = sources.length === 0;
  }

  /** Expands a source and reads its text through the host (once); from a marker, always expands and scrolls to it. */
  private openSource(n: number, fromMarker: boolean): void {
    const item = this.items.get(n);
    const source = this.sources.find((candidate) => candidate.n === n);
    if (!item || !source) return;
    const toggle = item.querySelector<HTMLButtonElement>(".source-toggle");
    const body = item.querySelector<HTMLElement>(".document");
    if (!toggle || !body) return;
    const expanded = fromMarker || toggle.getAttribute("aria-expanded") !== "true";
    toggle.setAttribute("aria-expanded", String(expanded));
    item.classList.toggle("expanded", expanded);
    body.hidden = !expanded;
    if (fromMarker) {
      item.scrollIntoView({ block: "nearest" });
      toggle.focus();
    }
    // Read once; a failed read is tried again on the next click.
    if (!expanded || (body.dataset.state !== undefined && body.dataset.state !== "error")) return;
    const { readSource } = this.actions;
    if (!readSource || !source.id) {
      body.dataset.state = "unavailable";
      body.append(element("p", "note", "This host cannot read the source's text here."));
      return;
    }
    body.dataset.state = "reading";
    body.replaceChildren(element("p", "note", "Reading the source…"));
    readSource(source.id)
      .then((read) => {
        body.dataset.state = "error" in read ? "error" : "read";
        if ("error" in read) {
          body.replaceChildren(element("p", "note error", read.error));
          return;
        }
        const note = read.whole ? "The whole document:" : "The passage the workspace cited (its interface serves no documents):";
        body.replaceChildren(element("p", "note", note), element("div", "document-text", read.text));
      })
      .catch((error: unknown) => {
        body.dataset.state = "error";
        body.replaceChildren(element("p", "note error", `The source could not be read: ${error instanceof Error ? error.message : "no answer"}`));
      });
  }
}

/** A source in words: its title, file and page. */
function describe(source: CardSource): string {
  return [source.title, source.filename, source.page === null ? null : `p. ${source.page}`].filter(Boolean).join(", ") || "source";
}
