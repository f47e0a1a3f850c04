import { type MarkerSpan, renderMarkdown } from "./markdown.js";
import { mcpSnippet, type SnippetKind, snippet } from "./snippets.js";
import { type Ask, buildRequest, type Citation, type OutgoingRequest, send, type Source } from "./transports.js";

/** What the adapter tells its page (GET /playground/settings.json). */
interface PageSettings {
  embedded: boolean;
  defaultWorkspace: string | null;
  /** A key that works (the embedded workspace accepts any); null with a real upstream. */
  key: string | null;
  /** Whether the adapter serves its MCP endpoint (`MCP=on`). */
  mcp: boolean;
}

const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const ui = {
  key: byId<HTMLInputElement>("key"),
  workspace: byId<HTMLInputElement>("workspace"),
  workspaces: byId<HTMLDataListElement>("workspaces"),
  mode: byId<HTMLSelectElement>("mode"),
  api: byId<HTMLSelectElement>("api"),
  developer: byId<HTMLInputElement>("developer"),
  developerView: byId<HTMLElement>("developer-view"),
  newConversation: byId<HTMLButtonElement>("new-conversation"),
  queryId: byId<HTMLElement>("query-id"),
  messages: byId<HTMLOListElement>("messages"),
  form: byId<HTMLFormElement>("ask"),
  question: byId<HTMLTextAreaElement>("question"),
  send: byId<HTMLButtonElement>("send"),
  stop: byId<HTMLButtonElement>("stop"),
  sourceList: byId<HTMLOListElement>("source-list"),
  noSources: byId<HTMLElement>("no-sources"),
  rawRequest: byId<HTMLElement>("raw-request"),
  frames: byId<HTMLOListElement>("frames"),
  snippet: byId<HTMLElement>("snippet"),
};

/** The conversation: what chat completions resend, and the last response Responses continues. */
const conversation = {
  history: [] as Ask["history"],
  previousResponseId: null as string | null,
  lastRequest: null as OutgoingRequest | null,
  controller: null as AbortController | null,
};

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The request as the developer view shows it: the key masked. */
function describeRequest(request: OutgoingRequest): string {
  const headers = { ...request.headers, authorization: "Bearer •••" };
  return `POST ${request.url}\n${Object.entries(headers).map(([name, value]) => `${name}: ${value}`).join("\n")}\n\n${JSON.stringify(request.body, null, 2)}`;
}

function showSnippet(kind: SnippetKind | "mcp"): void {
  if (kind === "mcp") {
    ui.snippet.textContent = mcpSnippet(location.origin, ui.workspace.value.trim());
    return;
  }
  if (!conversation.lastRequest) {
    ui.snippet.textContent = "Ask something first.";
    return;
  }
  ui.snippet.textContent = snippet(kind, ui.api.value as "chat" | "responses", conversation.lastRequest, location.origin);
}

/** Lists the answer's sources; a citation's button highlights its source. */
function showSources(sources: Source[]): HTMLLIElement[] {
  ui.sourceList.replaceChildren();
  ui.noSources.hidden = sources.length > 0;
  return sources.map((source, index) => {
    const item = element("li");
    item.id = `source-${index + 1}`;
    item.tabIndex = -1;
    const name = source.filename ?? source.title ?? "source";
    const heading = element("strong", undefined, name);
    item.append(heading);
    const details = [source.filename && source.title ? source.title : "", source.page !== null && source.page !== undefined ? `p. ${source.page}` : ""].filter(Boolean);
    if (details.length > 0) item.append(document.createTextNode(` — ${details.join(", ")}`));
    if (source.snippet) item.append(element("p", "snippet", source.snippet));
    if (source.url && /^https?:\/\//.test(source.url)) {
      const link = element("a", undefined, "open");
      link.href = source.url;
      link.target = "_blank";
      link.rel = "noopener noreferrer";
      item.append(document.createTextNode(" "), link);
    }
    ui.sourceList.append(item);
    return item;
  });
}

/** The source a citation names: the first with its filename (and title, when it names one). */
function sourceIndexOf(citation: Citation, sources: Source[]): number {
  const named = (source: Source) => source.filename === citation.filename || source.title === citation.filename;
  // A url_citation's title is its source's title, or its filename when it has none.
  const titled = (source: Source) => !citation.title || (source.title ?? source.filename) === citation.title;
  const exact = sources.findIndex((source) => named(source) && titled(source));
  return exact >= 0 ? exact : sources.findIndex(named);
}

function highlight(items: HTMLLIElement[], index: number): void {
  for (const item of items) item.classList.remove("highlight");
  const item = items[index];
  if (!item) return;
  item.classList.add("highlight");
  item.scrollIntoView({ block: "nearest" });
  item.focus();
}

/** Asks the question in the box, streaming the answer into a new message. */
async function ask(): Promise<void> {
  const question = ui.question.value.trim();
  if (!question || conversation.controller) return;
  const api = ui.api.value as "chat" | "responses";
  const request = buildRequest(api, {
    question,
    key: ui.key.value,
    workspace: ui.workspace.value.trim(),
    mode: ui.mode.value,
    history: conversation.history,
    previousResponseId: conversation.previousResponseId,
  });
  conversation.lastRequest = request;
  ui.rawRequest.textContent = describeRequest(request);
  ui.frames.replaceChildren();
  ui.question.value = "";

  const user = element("li", "message user");
  user.append(element("div", "role", "You"), element("p", undefined, question));
  const assistant = element("li", "message assistant");
  assistant.setAttribute("aria-busy", "true");
  const thinking = element("details");
  thinking.append(element("summary", undefined, "Thinking"), element("div", "steps"));
  thinking.hidden = true;
  const answer = element("div", "answer");
  const status = element("p", "muted", "Waiting for the workspace…");
  assistant.append(element("div", "role", "Workspace"), thinking, answer, status);
  ui.messages.append(user, assistant);

  let reasoning = "";
  let text = "";
  let pending = false;
  let citations: Citation[] = [];
  let sources: Source[] = [];
  let items: HTMLLIElement[] = [];
  const render = () => {
    renderMarkdown(answer, text, (marker: MarkerSpan) => {
      const citation = citations.find((candidate) => candidate.start === marker.start);
      if (!citation) return document.createTextNode(marker.text);
      const button = element("button", "cite", marker.text);
      button.type = "button";
      const index = sourceIndexOf(citation, sources);
      button.setAttribute("aria-label", `Source: ${sources[index]?.filename ?? citation.filename}${sources[index]?.title ? `, ${sources[index]?.title}` : ""}`);
      button.addEventListener("click", () => highlight(items, index));
      return button;
    });
  };
  const controller = new AbortController();
  conversation.controller = controller;
  ui.send.disabled = true;
  ui.stop.disabled = false;
  let failed = false;
  try {
    const { queryId } = await send(
      api,
      request,
      controller.signal,
      (frame) => {
        const item = element("li");
        item.append(element("span", "time", `+${frame.at.toFixed(0)} ms`), document.createTextNode(frame.text));
        ui.frames.append(item);
      },
      (update) => {
        if (update.kind === "reasoning") {
          reasoning += update.text;
          thinking.hidden = false;
          (thinking.querySelector(".steps") as HTMLElement).textContent = reasoning;
          status.textContent = "Thinking…";
        } else if (update.kind === "text") {
          text += update.text;
          status.textContent = "Answering…";
          if (!pending) {
            pending = true;
            requestAnimationFrame(() => {
              pending = false;
              render();
            });
          }
        } else if (update.kind === "done") {
          citations = update.citations;
          sources = update.sources;
          items = showSources(sources);
          render();
          if (update.responseId) conversation.previousResponseId = update.responseId;
          status.textContent = update.citations.length > 0 ? `${update.citations.length} citations; select one to see its source.` : "";
        } else {
          failed = true;
          status.textContent = update.message;
          status.className = "error";
          status.setAttribute("role", "alert");
        }
      },
    );
    if (queryId) ui.queryId.textContent = `Workspace query: ${queryId}`;
  } catch (error) {
    failed = true;
    status.textContent = controller.signal.aborted ? "Stopped." : `The request failed: ${(error as Error).message}`;
    if (!controller.signal.aborted) status.className = "error";
  } finally {
    render();
    conversation.controller = null;
    ui.send.disabled = false;
    ui.stop.disabled = true;
    assistant.removeAttribute("aria-busy");
  }
  if (!failed && text) {
    conversation.history.push({ role: "user", content: question }, { role: "assistant", content: text });
  }
  if (status.textContent === "Answering…" || status.textContent === "Thinking…") status.textContent = "";
}

async function loadWorkspaces(): Promise<void> {
  if (!ui.key.value) return;
  try {
    const response = await fetch("/v1/models", { headers: { authorization: `Bearer ${ui.key.value}` } });
    if (!response.ok) return;
    const models = ((await response.json()) as { data: { id: string }[] }).data.map((model) => model.id);
    const workspaces = [...new Set(models.filter((id) => id.includes("/")).map((id) => id.split("/")[0] as string))];
    ui.workspaces.replaceChildren(...workspaces.map((workspace) => Object.assign(document.createElement("option"), { value: workspace })));
    if (!ui.workspace.value && workspaces[0]) ui.workspace.value = workspaces[0];
  } catch {
    // The list is a convenience: a workspace can always be typed.
  }
}

function resetConversation(): void {
  conversation.history = [];
  conversation.previousResponseId = null;
  ui.messages.replaceChildren();
  ui.queryId.textContent = "";
  showSources([]);
}

async function start(): Promise<void> {
  const settings = (await (await fetch("/playground/settings.json")).json()) as PageSettings;
  ui.key.value = settings.key ?? "";
  ui.workspace.value = settings.defaultWorkspace ?? "";
  ui.form.addEventListener("submit", (event) => {
    event.preventDefault();
    void ask();
  });
  ui.question.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      void ask();
    }
  });
  ui.stop.addEventListener("click", () => conversation.controller?.abort());
  ui.newConversation.addEventListener("click", resetConversation);
  ui.api.addEventListener("change", resetConversation);
  ui.key.addEventListener("change", () => void loadWorkspaces());
  ui.developer.addEventListener("change", () => {
    ui.developerView.hidden = !ui.developer.checked;
  });
  for (const button of document.querySelectorAll<HTMLButtonElement>("[data-snippet]")) {
    button.addEventListener("click", () => showSnippet(button.dataset.snippet as SnippetKind | "mcp"));
  }
  byId<HTMLButtonElement>("mcp-snippet").hidden = !settings.mcp;
  showSources([]);
  await loadWorkspaces();
  ui.question.focus();
}

void start();
