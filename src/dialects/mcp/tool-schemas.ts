import { z } from "zod";
import { ID_PATTERN } from "../../core/ids.js";
import { MODES } from "../../core/modes.js";

/** What every answer tool (`ask`, `reason`, `build`) takes: the question, and a query to continue. */
export const answerToolInputSchema = z.strictObject({
  question: z
    .string()
    .regex(/\S/, "Should not be blank")
    .describe("The question, in the user's words (for `build`: what to write). It goes to the workspace as is."),
  query_id: z
    .string()
    .regex(ID_PATTERN)
    .nullish()
    .describe("The `query_id` of an earlier answer, to continue that conversation as a new turn; leave out for a new question."),
});
/** The arguments of an answer tool. */
export type AnswerToolInput = z.output<typeof answerToolInputSchema>;

/** One source of an answer, numbered as the answer's `[n]` markers number it, with its link. */
export const toolSourceSchema = z.object({
  n: z.int().min(1).describe("The number the answer's `[n]` markers use for this source"),
  filename: z.string().nullable(),
  title: z.string().nullable(),
  page: z.int().nullable(),
  snippet: z.string().nullable().describe("The passage the answer drew on, when the workspace said"),
  url: z.string().describe("A link to the document (or a `urn:workspace-document:` name when there is no page to open)"),
  cited: z.boolean().describe("Whether a marker in the answer points at it"),
});
/** A source as the answer tools return it. */
export type ToolSource = z.output<typeof toolSourceSchema>;

/** A source as the answer card reads it (docs/mcp.md#the-answer-card): with the id `fetch` takes, to show its text. */
export const cardSourceSchema = toolSourceSchema.extend({
  id: z.string().describe("Pass it to `fetch` for the source's text (the same id `search` gives)"),
});

/** `structuredContent` of an answer tool (docs/architecture/mcp.md#mcp-tools): the same answer its `content` writes as Markdown. */
export const answerToolOutputSchema = z.object({
  answer: z.string().describe("The answer in Markdown, with its citation markers ([1], [handbook.pdf, p. 4], [^1])"),
  query_id: z.string().describe("The workspace query: pass it as `query_id` to ask a follow-up"),
  mode: z.enum(MODES),
  sources: z.array(toolSourceSchema),
  steps: z.array(z.string()).describe("What the workspace did on the way, step by step"),
});
/** The structured result of an answer tool. */
export type AnswerToolOutput = z.output<typeof answerToolOutputSchema>;

/** `structuredContent` of an answer tool for a host that shows the answer card: each source with its `fetch` id. */
export const answerCardOutputSchema = answerToolOutputSchema.extend({ sources: z.array(cardSourceSchema) });
/** The structured result of an answer tool, as the card reads it. */
export type AnswerCardOutput = z.output<typeof answerCardOutputSchema>;

/** `search` takes one string, as OpenAI's connector convention asks. */
export const searchInputSchema = z.strictObject({
  query: z.string().regex(/\S/, "Should not be blank").describe("What to look for, in natural language"),
});

/** `search`'s result: OpenAI's connector shape `{results: [{id, title, url}]}`. */
export const searchOutputSchema = z.object({
  results: z.array(
    z.object({
      id: z.string().describe("Pass it to `fetch` for the document's text"),
      title: z.string(),
      url: z.string(),
    }),
  ),
});
/** The structured result of `search`. */
export type SearchOutput = z.output<typeof searchOutputSchema>;

/** `fetch` takes an id that `search` returned. */
export const fetchInputSchema = z.strictObject({
  id: z.string().min(1).describe("An `id` from a `search` result"),
});

/** `fetch`'s result: OpenAI's connector shape `{id, title, text, url, metadata}`. */
export const fetchOutputSchema = z.object({
  id: z.string(),
  title: z.string(),
  text: z.string(),
  url: z.string(),
  metadata: z.object({
    filename: z.string().nullable(),
    page: z.int().nullable(),
    snippet: z.string().nullable(),
    workspace: z.string(),
    /** `document`: `text` is the whole document; `passage`: only the passage the answer cited. */
    text_is: z.enum(["document", "passage"]),
  }),
});
/** The structured result of `fetch`. */
export type FetchOutput = z.output<typeof fetchOutputSchema>;

