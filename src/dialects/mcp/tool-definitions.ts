import { z } from "zod";
import { ID_PATTERN } from "../../core/ids.js";
import { type Mode, MODES } from "../../core/modes.js";

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

/** `structuredContent` of an answer tool (docs/architecture.md#mcp-tools): the same answer its `content` writes as Markdown. */
export const answerToolOutputSchema = z.object({
  answer: z.string().describe("The answer in Markdown, with its citation markers ([1], [handbook.pdf, p. 4], [^1])"),
  query_id: z.string().describe("The workspace query: pass it as `query_id` to ask a follow-up"),
  mode: z.enum(MODES),
  sources: z.array(toolSourceSchema),
  steps: z.array(z.string()).describe("What the workspace did on the way, step by step"),
});
/** The structured result of an answer tool. */
export type AnswerToolOutput = z.output<typeof answerToolOutputSchema>;

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

/** The names of the tools. */
export const TOOL_NAMES = ["ask", "reason", "build", "search", "fetch"] as const;
/** One tool's name. */
export type ToolName = (typeof TOOL_NAMES)[number];

/** One tool: what `tools/list` says of it, and the schemas its arguments and result follow. */
export interface ToolDefinition {
  name: ToolName;
  title: string;
  description: string;
  input: z.ZodType;
  output: z.ZodType;
  /** The answer mode it asks in (`search` asks as `ask`; `fetch` asks nothing). */
  mode: Mode | null;
}

/**
 * The workspace's tools (docs/architecture.md#mcp-tools). Descriptions are written for the model
 * that picks a tool: what it is for, when to prefer it, what comes back.
 */
export const TOOLS: readonly ToolDefinition[] = [
  {
    name: "ask",
    title: "Ask the workspace",
    description:
      "Ask the workspace's documents a question and get a short answer grounded in them, with numbered citations and a list of the sources (file, title, page, link). Use it first for factual questions about what the documents say. To follow up on an earlier answer, pass its `query_id`.",
    input: answerToolInputSchema,
    output: answerToolOutputSchema,
    mode: "ask",
  },
  {
    name: "reason",
    title: "Reason over the workspace",
    description:
      "A thorough answer from the workspace's documents: the question broken down, the passages compared, the conclusion explained, every claim cited. Slower than `ask` (it can take minutes); prefer it when the question needs several documents or a careful comparison. Pass `query_id` to continue an earlier answer.",
    input: answerToolInputSchema,
    output: answerToolOutputSchema,
    mode: "reason",
  },
  {
    name: "build",
    title: "Write a document from the workspace",
    description:
      "Write a document (a draft, a summary, a brief) from the workspace's documents, with footnote citations. `question` says what to write. Slower than `ask`. Pass `query_id` to revise an earlier document.",
    input: answerToolInputSchema,
    output: answerToolOutputSchema,
    mode: "build",
  },
  {
    name: "search",
    title: "Search the workspace",
    description:
      "Find the workspace's documents about a topic: returns `{results: [{id, title, url}]}`, the sources a short answer to the query cites. Pass a result's `id` to `fetch` for its text. (OpenAI's connector convention, as ChatGPT connectors and deep research use it.)",
    input: searchInputSchema,
    output: searchOutputSchema,
    mode: "ask",
  },
  {
    name: "fetch",
    title: "Fetch a search result",
    description:
      "The text of one `search` result: `{id, title, text, url, metadata}`. `metadata.text_is` says whether `text` is the whole document or only the passage the workspace cited.",
    input: fetchInputSchema,
    output: fetchOutputSchema,
    mode: null,
  },
];

/** A tool as `tools/list` lists it: JSON Schemas of its arguments and its result, read-only hints. */
export interface ListedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown> & { type: "object" };
  outputSchema: Record<string, unknown> & { type: "object" };
  annotations: { title: string; readOnlyHint: true; openWorldHint: false; destructiveHint: false; idempotentHint: false };
}

/**
 * The `tools/list` entries, from the same zod schemas that validate the arguments. JSON Schema
 * draft-07 without `$schema`: the constructs used read the same in 2020-12 (the MCP default), and
 * older clients' validators (Ajv's default draft) compile them.
 */
export function listedTools(): ListedTool[] {
  return TOOLS.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: jsonSchemaOf(tool.input, "input"),
    outputSchema: jsonSchemaOf(tool.output, "output"),
    // Answers read the workspace and change nothing; a query is a new turn, so not idempotent.
    annotations: { title: tool.title, readOnlyHint: true, openWorldHint: false, destructiveHint: false, idempotentHint: false },
  }));
}

function jsonSchemaOf(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> & { type: "object" } {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, target: "draft-7" }) as Record<string, unknown>;
  return { ...rest, type: "object" };
}

/** The tool of a name, if there is one. */
export function toolNamed(name: string): ToolDefinition | undefined {
  return TOOLS.find((tool) => tool.name === name);
}

/** A `tools/call` (with an id: not a notification) of a tool that asks the workspace (its definition has a `mode`), or undefined. */
export function workspaceCall(body: unknown): { id: string | number } | undefined {
  const message = body as { method?: unknown; id?: unknown; params?: { name?: unknown } } | null;
  if (typeof message !== "object" || message === null || message.method !== "tools/call") return undefined;
  const { name } = message.params ?? {};
  const tool = TOOLS.find((definition) => definition.name === name);
  if (!tool || tool.mode === null) return undefined;
  return typeof message.id === "string" || typeof message.id === "number" ? { id: message.id } : undefined;
}

/** What `initialize` (or `server/discover`) tells the client about the tools, for its model. */
export function instructionsFor(workspace: string): string {
  return (
    `Tools over the documents of workspace '${workspace}' (a Workspace Knowledge Service). ` +
    "ask: a short grounded answer; reason: a thorough one (slower); build: a document. Each answer cites numbered sources " +
    "and gives a query_id to continue with. search and fetch follow OpenAI's connector convention."
  );
}
