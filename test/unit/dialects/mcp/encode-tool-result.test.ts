import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import type { AnswerEvent } from "../../../../src/answer/answer-events.js";
import { sourceLinker } from "../../../../src/answer/source-links.js";
import { answerResult, AnswerToolEncoder, fetchResult, searchResult, toolError } from "../../../../src/dialects/mcp/encode-tool-result.js";
import { readSourceId } from "../../../../src/dialects/mcp/source-ids.js";
import { listedTools } from "../../../../src/dialects/mcp/tool-definitions.js";
import { ToolProgress } from "../../../../src/dialects/mcp/tool-progress.js";

const pageLinks = sourceLinker({ template: undefined, documentPage: () => "http://127.0.0.1:8080" }, "acme");
const nameLinks = sourceLinker({ template: undefined, documentPage: undefined }, "acme");
const outputSchema = (name: string) => listedTools().find((tool) => tool.name === name)?.outputSchema as object;

/** The events of a finished `ask` answer whose output closes with its own references list. */
const askEvents: AnswerEvent[] = [
  { type: "reasoning", choice: 0, text: "Looking.\n\nUsing tool: search_documents", steps: ["Looking.", "Using tool: search_documents"] },
  { type: "text", choice: 0, text: "Incidents are reported within one hour [2]. Receipts are kept [1]." },
  { type: "text", choice: 0, text: "\n\nSources:\n[1] expenses.txt\n[2] security-policy.md, p. 3 — Reporting" },
  {
    type: "cited",
    choice: 0,
    citations: [],
    sources: [
      { filename: "security-policy.md", title: "Reporting", page: 3, snippet: "within one hour", cited: true },
      { filename: "expenses.txt", title: null, page: null, snippet: null, cited: true },
    ],
  },
  { type: "finished", choice: 0, queryId: "q-1", usage: undefined },
];

describe("the answer tools' result", () => {
  it("is the answer as data, sources numbered as its markers number them, its own references list left out", () => {
    const encoder = new AnswerToolEncoder("ask", pageLinks);
    for (const event of askEvents) encoder.add(event);
    expect(encoder.finished).toBe(true);
    const result = encoder.result();
    expect(result.structuredContent).toEqual({
      answer: "Incidents are reported within one hour [2]. Receipts are kept [1].",
      query_id: "q-1",
      mode: "ask",
      sources: [
        { n: 1, filename: "expenses.txt", title: null, page: null, snippet: null, url: "http://127.0.0.1:8080/documents/acme/expenses.txt", cited: true },
        {
          n: 2,
          filename: "security-policy.md",
          title: "Reporting",
          page: 3,
          snippet: "within one hour",
          url: "http://127.0.0.1:8080/documents/acme/security-policy.md?page=3&quote=within+one+hour#cited",
          cited: true,
        },
      ],
      steps: ["Looking.", "Using tool: search_documents"],
    });
    expect(new Ajv().validate(outputSchema("ask"), result.structuredContent)).toBe(true);
  });

  it("writes the same answer as one Markdown text: the answer, a Sources list with links, the query id", () => {
    const encoder = new AnswerToolEncoder("ask", pageLinks);
    for (const event of askEvents) encoder.add(event);
    expect(encoder.result().content).toEqual([
      {
        type: "text",
        text:
          "Incidents are reported within one hour [2]. Receipts are kept [1].\n\nSources:\n" +
          "[1] expenses.txt <http://127.0.0.1:8080/documents/acme/expenses.txt>\n" +
          "[2] security-policy.md, p. 3 — Reporting <http://127.0.0.1:8080/documents/acme/security-policy.md?page=3&quote=within+one+hour#cited>\n\n" +
          "(query_id: q-1)",
      },
    ]);
  });

  it("writes no link for a source that has only a urn name, but keeps the name as its url", () => {
    const encoder = new AnswerToolEncoder("ask", nameLinks);
    for (const event of askEvents) encoder.add(event);
    const { content, structuredContent } = encoder.result();
    expect((content?.[0] as { text: string }).text).toContain("\n[1] expenses.txt\n[2] security-policy.md, p. 3 — Reporting\n");
    expect((structuredContent as { sources: { url: string }[] }).sources[0]?.url).toBe("urn:workspace-document:acme:expenses.txt");
  });

  it("gives a host that shows the answer card each source's fetch id (the id search gives), with the same content", () => {
    const encoder = new AnswerToolEncoder("ask", pageLinks);
    for (const event of askEvents) encoder.add(event);
    const plain = encoder.result();
    const card = answerResult(encoder.output(), pageLinks, "acme");
    expect(card.content).toEqual(plain.content);
    const sources = (card.structuredContent as { sources: { id: string; filename: string | null; page: number | null }[] }).sources;
    expect(sources.map((source) => readSourceId(source.id))).toEqual([
      { workspace: "acme", filename: "expenses.txt", title: null, page: null, snippet: null },
      { workspace: "acme", filename: "security-policy.md", title: "Reporting", page: 3, snippet: "within one hour" },
    ]);
    const search = searchResult(encoder.output(), "acme").structuredContent as { results: { id: string }[] };
    expect(search.results.map((result) => result.id)).toEqual(sources.map((source) => source.id));
    expect(new Ajv().validate(listedTools({ card: true }).find((tool) => tool.name === "ask")?.outputSchema as object, card.structuredContent)).toBe(true);
    expect(new Ajv().validate(outputSchema("ask"), card.structuredContent)).toBe(false);
  });

  it("is not finished before its query ended", () => {
    const encoder = new AnswerToolEncoder("reason", pageLinks);
    for (const event of askEvents.slice(0, 3)) encoder.add(event);
    expect(encoder.finished).toBe(false);
  });
});

describe("search and fetch", () => {
  const encoder = new AnswerToolEncoder("ask", pageLinks);
  for (const event of askEvents) encoder.add(event);

  it("search gives OpenAI's {results: [{id, title, url}]}, as data and as JSON text; each id names its source", () => {
    const result = searchResult(encoder.output(), "acme");
    const { results } = result.structuredContent as { results: { id: string; title: string; url: string }[] };
    expect(results.map(({ title, url }) => ({ title, url }))).toEqual([
      { title: "expenses.txt", url: "http://127.0.0.1:8080/documents/acme/expenses.txt" },
      { title: "Reporting — security-policy.md, p. 3", url: "http://127.0.0.1:8080/documents/acme/security-policy.md?page=3&quote=within+one+hour#cited" },
    ]);
    expect(readSourceId(results[1]?.id as string)).toEqual({ workspace: "acme", filename: "security-policy.md", title: "Reporting", page: 3, snippet: "within one hour" });
    expect(JSON.parse((result.content?.[0] as { text: string }).text)).toEqual(result.structuredContent);
    expect(new Ajv().validate(outputSchema("search"), result.structuredContent)).toBe(true);
  });

  it("fetch gives the whole document when the adapter can read it, else the cited passage, and says which", () => {
    const reference = { workspace: "acme", filename: "security-policy.md", title: "Reporting", page: 3, snippet: "within one hour" };
    const whole = fetchResult("id-1", reference, { filename: "security-policy.md", text: "The whole policy." }, "http://x/doc");
    expect(whole.structuredContent).toEqual({
      id: "id-1",
      title: "Reporting — security-policy.md, p. 3",
      text: "The whole policy.",
      url: "http://x/doc",
      metadata: { filename: "security-policy.md", page: 3, snippet: "within one hour", workspace: "acme", text_is: "document" },
    });
    const passage = fetchResult("id-1", reference, null, "urn:x");
    expect(passage.structuredContent).toMatchObject({ text: "within one hour", metadata: { text_is: "passage" } });
    expect(new Ajv().validate(outputSchema("fetch"), passage.structuredContent)).toBe(true);
  });

  it("a failure is a tool error the model reads", () => {
    expect(toolError("The workspace query q failed")).toEqual({ content: [{ type: "text", text: "The workspace query q failed" }], isError: true });
  });
});

describe("progress", () => {
  it("numbers every notification, one per step, with the step's text", () => {
    const progress = new ToolProgress("token-1");
    expect(progress.started("q-1", "reason")).toEqual({ progressToken: "token-1", progress: 1, message: "Asked the workspace (reason query q-1)" });
    expect(progress.of(askEvents[0] as AnswerEvent).map((params) => [params.progress, params.message])).toEqual([
      [2, "Looking."],
      [3, "Using tool: search_documents"],
    ]);
    expect(progress.of(askEvents[1] as AnswerEvent)).toEqual([]);
    expect(progress.waiting(30_400)).toEqual({ progressToken: "token-1", progress: 4, message: "Still working (30 s)" });
  });
});
