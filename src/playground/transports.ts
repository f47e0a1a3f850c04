import { createParser } from "eventsource-parser";

/** A source of an answer, as both APIs describe it. */
export interface Source {
  filename: string | null;
  title: string | null;
  page: number | null;
  snippet: string | null;
  url?: string | null;
}

/** A citation: its code-point span in the answer, and the source it names. */
export interface Citation {
  start: number;
  end: number;
  filename: string;
  title?: string | null;
}

/** What the page learns from a streamed answer, in order. */
export type AnswerUpdate =
  | { kind: "reasoning"; text: string }
  | { kind: "text"; text: string }
  | { kind: "done"; citations: Citation[]; sources: Source[]; responseId?: string }
  | { kind: "error"; message: string };

/** One frame exactly as received, and when (ms since the request was sent). */
export interface Frame {
  at: number;
  text: string;
}

/** The request a transport sends: shown in the developer view and copied as code. */
export interface OutgoingRequest {
  url: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** What the page asks: the question, the settings, and where the conversation stands. */
export interface Ask {
  question: string;
  key: string;
  workspace: string;
  mode: string;
  /** Chat: the history so far (the adapter matches it to the query it continues). */
  history: { role: "user" | "assistant"; content: string }[];
  /** Responses: the previous response, whose query this continues. */
  previousResponseId: string | null;
}

/** The request of one question, for either API (streamed; the page reads it as it comes). */
export function buildRequest(api: "chat" | "responses", ask: Ask): OutgoingRequest {
  const headers: Record<string, string> = { "content-type": "application/json", authorization: `Bearer ${ask.key}` };
  if (ask.workspace) headers["service-workspace"] = ask.workspace;
  if (api === "chat") {
    // url_citation carries each source's title, which tells two sections of one file apart.
    headers["x-chat-annotations"] = "url_citation";
    return {
      url: "/v1/chat/completions",
      headers,
      body: { model: ask.mode, stream: true, stream_options: { include_usage: true }, messages: [...ask.history, { role: "user", content: ask.question }] },
    };
  }
  // file_citation carries each source's file name, page and snippet, which the page lists (the default is url_citation).
  headers["x-responses-annotations"] = "file_citation";
  const body: Record<string, unknown> = { model: ask.mode, stream: true, input: ask.question };
  if (ask.previousResponseId) body.previous_response_id = ask.previousResponseId;
  return { url: "/v1/responses", headers, body };
}

/** The readable message of an error body (the adapter's `error.message`, else its `detail`). */
function errorMessage(status: number, text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: string }; detail?: unknown };
    if (body.error?.message) return `${status}: ${body.error.message}`;
    if (typeof body.detail === "string") return `${status}: ${body.detail}`;
  } catch {
    // not JSON: the status says it
  }
  return `${status}: ${text.slice(0, 300) || "no body"}`;
}

/**
 * Sends a request and reports every frame as received and what it means, until the answer ends,
 * fails, or `signal` aborts (stopping the adapter's wait upstream too, as for any client).
 */
export async function send(
  api: "chat" | "responses",
  request: OutgoingRequest,
  signal: AbortSignal,
  onFrame: (frame: Frame) => void,
  onUpdate: (update: AnswerUpdate) => void,
): Promise<{ queryId: string | null }> {
  const started = performance.now();
  const response = await fetch(request.url, { method: "POST", headers: request.headers, body: JSON.stringify(request.body), signal });
  const queryId = response.headers.get("service-query-id");
  if (!response.ok || !response.body) {
    const text = await response.text();
    onFrame({ at: performance.now() - started, text: `HTTP ${response.status}\n${text}` });
    onUpdate({ kind: "error", message: errorMessage(response.status, text) });
    return { queryId };
  }
  const read = api === "chat" ? chatReader(onUpdate) : responsesReader(onUpdate);
  const parser = createParser({
    onEvent: (event) => {
      onFrame({ at: performance.now() - started, text: `${event.event ? `event: ${event.event}\n` : ""}data: ${event.data}` });
      if (event.data !== "[DONE]") read(event.data);
    },
  });
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    parser.feed(decoder.decode(chunk.value, { stream: true }));
  }
  return { queryId };
}

/** The wire shapes the page reads: loose on purpose (only what it shows). */
interface WireAnnotation {
  type: string;
  start_index?: number;
  end_index?: number;
  file_citation?: { filename: string };
  url_citation?: { url: string; title: string; start_index: number; end_index: number };
  file_id?: string;
  filename?: string;
  index?: number;
  title?: string;
  page?: number;
  snippet?: string;
}
interface WireDelta {
  content?: string;
  reasoning_content?: string;
  annotations?: WireAnnotation[];
  sources?: Source[];
}
interface WireOutputItem {
  type: string;
  content?: { text?: string; annotations?: WireAnnotation[] }[];
}
interface WireEvent {
  type: string;
  delta?: string;
  message?: string;
  response?: { id: string; output: WireOutputItem[]; error?: { message?: string } | null };
}

/** A chat annotation as a citation (either format). */
function chatCitation(annotation: WireAnnotation): Citation {
  const url = annotation.url_citation;
  if (url) return { start: url.start_index, end: url.end_index, filename: url.title, title: url.title };
  return { start: annotation.start_index ?? 0, end: annotation.end_index ?? 0, filename: annotation.file_citation?.filename ?? "source" };
}

/** Chat completion chunks: reasoning and content deltas; annotations and sources when the choice finishes; error frames. */
function chatReader(onUpdate: (update: AnswerUpdate) => void): (data: string) => void {
  return (data) => {
    type Chunk = { error?: { message: string }; choices?: { delta: WireDelta; finish_reason: string | null }[] };
    const chunk = JSON.parse(data) as Chunk;
    if (chunk.error) {
      onUpdate({ kind: "error", message: chunk.error.message });
      return;
    }
    for (const choice of chunk.choices ?? []) {
      if (choice.delta.reasoning_content) onUpdate({ kind: "reasoning", text: choice.delta.reasoning_content });
      if (choice.delta.content) onUpdate({ kind: "text", text: choice.delta.content });
      if (choice.finish_reason) {
        const annotations = choice.delta.annotations ?? [];
        // A url_citation names its source's link: the panel offers it.
        const sources = (choice.delta.sources ?? []).map((source) => {
          const cited = annotations.find((annotation) => annotation.url_citation?.title === (source.title ?? source.filename));
          return cited?.url_citation ? { ...source, url: cited.url_citation.url } : source;
        });
        onUpdate({ kind: "done", citations: annotations.map(chatCitation), sources });
      }
    }
  };
}

/** Responses API events: reasoning summary and text deltas; the completed response's annotations; failures. */
function responsesReader(onUpdate: (update: AnswerUpdate) => void): (data: string) => void {
  return (data) => {
    const event = JSON.parse(data) as WireEvent;
    switch (event.type) {
      case "response.reasoning_summary_text.delta":
        onUpdate({ kind: "reasoning", text: event.delta ?? "" });
        break;
      case "response.output_text.delta":
        onUpdate({ kind: "text", text: event.delta ?? "" });
        break;
      case "response.completed": {
        const part = event.response?.output.find((item) => item.type === "message")?.content?.[0];
        const text = part?.text ?? "";
        const annotations = part?.annotations ?? [];
        const citations = annotations.map((annotation): Citation => {
          const at = annotation.index ?? 0;
          const marker = /^(\[[^\]]*\]|【[^】]*】)/.exec([...text].slice(at).join(""))?.[0] ?? "";
          return { start: at, end: at + [...marker].length, filename: annotation.filename ?? "source", title: annotation.title ?? null };
        });
        const sources = new Map<string, Source>();
        for (const annotation of annotations) {
          const { filename = null, title = null, page = null, snippet = null } = annotation;
          sources.set(annotation.file_id ?? String(sources.size), { filename, title, page, snippet });
        }
        onUpdate({ kind: "done", citations, sources: [...sources.values()], ...(event.response ? { responseId: event.response.id } : {}) });
        break;
      }
      case "response.failed":
        onUpdate({ kind: "error", message: event.response?.error?.message ?? "The response failed" });
        break;
      case "error":
        onUpdate({ kind: "error", message: event.message ?? "The stream failed" });
        break;
      default:
        break;
    }
  };
}
