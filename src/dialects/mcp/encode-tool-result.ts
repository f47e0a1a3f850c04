import type { CallToolResult } from "@modelcontextprotocol/server";
import type { AnswerEvent, ChoiceSent } from "../../answer/answer-events.js";
import { numberSources } from "../../answer/source-numbers.js";
import { markdownUrl, type SourceLinker } from "../../answer/source-links.js";
import type { DocumentText } from "../../core/document-reader.js";
import type { Mode } from "../../core/modes.js";
import type { CitedSource } from "../../core/source-record.js";
import { type SourceReference, sourceId } from "./source-ids.js";
import type { AnswerCardOutput, AnswerToolOutput, FetchOutput, SearchOutput, ToolSource } from "./tool-schemas.js";

/**
 * The answer an answer tool's events add up to: pure, fed every event but `failed` (which the
 * runner turns into a tool error). Unlike the OpenAI encoders it reports no usage: a tool result
 * has no place for it.
 */
export class AnswerToolEncoder {
  private text = "";
  private readonly steps: string[] = [];
  private sources: CitedSource[] = [];
  private queryId: string | null = null;

  constructor(
    private readonly mode: Mode,
    private readonly links: SourceLinker,
  ) {}

  add(event: AnswerEvent): void {
    if (event.type === "reasoning") this.steps.push(...event.steps);
    else if (event.type === "text") this.text += event.text;
    else if (event.type === "cited") this.sources = event.sources;
    else if (event.type === "finished") this.queryId = event.queryId;
  }

  /** Whether the answer ended (its query PROCESSED): only then is there a result to give. */
  get finished(): boolean {
    return this.queryId !== null;
  }

  /** What the call delivered, as usage counts it: the answer's text and its steps. */
  sent(): ChoiceSent[] {
    const output = this.output();
    return [{ content: output.answer, reasoning: output.steps.join("\n") }];
  }

  /** The structured answer: the text without its own references list, the sources numbered as its markers number them. */
  output(): AnswerToolOutput {
    const { body, numbers } = numberSources(this.text, this.sources);
    const sources: ToolSource[] = this.sources
      .map((source, index) => ({ n: numbers[index] as number, ...source, url: this.links(source).url }))
      .sort((a, b) => a.n - b.n);
    return { answer: body, query_id: this.queryId ?? "", mode: this.mode, sources, steps: [...this.steps] };
  }

  /** The tool result (`answerResult`), for a host without the answer card. */
  result(): CallToolResult {
    return answerResult(this.output(), this.links, null);
  }
}

/**
 * An answer tool's result, complete in both places clients read (docs/architecture/mcp.md#mcp-tools):
 * `content` is one Markdown text (the answer, a `Sources:` list with links, the query id to
 * continue with), `structuredContent` the same as data. For a host that shows the answer card
 * (`cardWorkspace`: the workspace the ids name), each source also carries the id `fetch` takes;
 * `content` stays the same, since it is what the model reads.
 */
export function answerResult(output: AnswerToolOutput, links: SourceLinker, cardWorkspace: string | null): CallToolResult {
  const text = answerMarkdown(output, links);
  if (cardWorkspace === null) return { content: [{ type: "text", text }], structuredContent: output };
  const sources = output.sources.map((source) => ({ ...source, id: sourceIdOf(source, cardWorkspace) }));
  const structured: AnswerCardOutput = { ...output, sources };
  return { content: [{ type: "text", text }], structuredContent: structured };
}

/** The answer as Markdown: its text, then `Sources:` one per line (`[n] file, p. N — title <link>`), then the query id. */
export function answerMarkdown(output: AnswerToolOutput, links: SourceLinker): string {
  const lines = output.sources.map((source) => {
    const page = source.page === null ? "" : `, p. ${source.page}`;
    const name = source.filename ?? source.title ?? "source";
    const title = source.filename && source.title ? ` — ${source.title}` : "";
    return `[${source.n}] ${name}${page}${title}${links(source).clickable ? ` <${markdownUrl(source.url)}>` : ""}`;
  });
  const sources = lines.length > 0 ? `\n\nSources:\n${lines.join("\n")}` : "";
  return `${output.answer}${sources}\n\n(query_id: ${output.query_id})`;
}

/** `search`'s result (OpenAI's connector convention): the answer's sources as `{id, title, url}`, also as JSON text. */
export function searchResult(output: AnswerToolOutput, workspace: string): CallToolResult {
  const results = output.sources.map((source) => ({
    id: sourceIdOf(source, workspace),
    title: titleOf(source),
    url: source.url,
  }));
  const unique = results.filter((result, index) => results.findIndex((other) => other.id === result.id) === index);
  const structured: SearchOutput = { results: unique };
  return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
}

/**
 * `fetch`'s result (OpenAI's connector convention): the whole document when the adapter can read
 * it (the embedded workspace), else what the id carries, the passage the answer cited.
 */
export function fetchResult(id: string, reference: SourceReference, document: DocumentText | null, url: string): CallToolResult {
  const passage = reference.snippet ?? "";
  const text = document
    ? document.text
    : passage || "The workspace gave no passage for this source, and its interface serves no document text; open the url.";
  const structured: FetchOutput = {
    id,
    title: titleOf(reference),
    text,
    url,
    metadata: {
      filename: reference.filename,
      page: reference.page,
      snippet: reference.snippet,
      workspace: reference.workspace,
      text_is: document ? "document" : "passage",
    },
  };
  return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
}

/** A tool error the model reads (`isError`): the message a client of the OpenAI routes would get. */
export function toolError(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

/** The id `fetch` reads a source of an answer back from (`search` gives the same). */
function sourceIdOf(source: ToolSource, workspace: string): string {
  return sourceId({ workspace, filename: source.filename, title: source.title, page: source.page, snippet: source.snippet });
}

/** A result's title: the source's title, its file and page (`Reporting — security-policy.md, p. 3`). */
function titleOf(source: { filename: string | null; title: string | null; page: number | null }): string {
  const place = `${source.filename ?? ""}${source.page === null ? "" : `${source.filename ? ", " : ""}p. ${source.page}`}`;
  if (!source.title) return place || "Source";
  return place ? `${source.title} — ${place}` : source.title;
}
