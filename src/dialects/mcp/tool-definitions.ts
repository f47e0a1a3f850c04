import type { CallToolResult } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { SourceLinker } from "../../answer/source-links.js";
import type { DocumentReader } from "../../core/document-reader.js";
import type { Mode } from "../../core/modes.js";
import { cardToolMeta } from "./answer-card.js";
import { answerResult, searchResult, toolError } from "./encode-tool-result.js";
import { fetchTool } from "./fetch-tool.js";
import {
  answerCardOutputSchema,
  type AnswerToolInput,
  answerToolInputSchema,
  type AnswerToolOutput,
  answerToolOutputSchema,
  fetchInputSchema,
  fetchOutputSchema,
  searchInputSchema,
  searchOutputSchema,
} from "./tool-schemas.js";

/** The names of the tools. */
export const TOOL_NAMES = ["ask", "reason", "build", "search", "fetch"] as const;
/** One tool's name. */
export type ToolName = (typeof TOOL_NAMES)[number];

/** A workspace answer, followed to its end: its structured output, or the message of its failure. */
export type Answered = { output: AnswerToolOutput } | { error: string };

/**
 * What a tool runs with, per call (its I/O injected by the MCP edge, src/http/mcp/): the caller's
 * workspace and source links, the documents `fetch` can read whole, and the answer runner.
 */
export interface ToolContext {
  workspace: string;
  links: SourceLinker;
  /** Whether this request's host shows the answer card (docs/mcp.md#the-answer-card): the result then carries each source's `fetch` id. */
  card: boolean;
  /** The documents `fetch` returns whole (the embedded workspace's); without it, `fetch` returns the cited passage. */
  documents: DocumentReader | undefined;
  /**
   * Asks the workspace in a mode and follows the answer to its end (the answer runner, with the
   * call's progress and cancellation). Never throws: a failure is the message the OpenAI routes give.
   */
  answer(mode: Mode, input: AnswerToolInput): Promise<Answered>;
}

/**
 * One tool (docs/architecture/mcp.md#mcp-tools): what `tools/list` says of it, the schemas of its
 * arguments and result, and what it does with arguments its `input` schema parsed.
 */
export interface ToolDefinition<Input extends z.ZodType = z.ZodType> {
  name: ToolName;
  title: string;
  description: string;
  input: Input;
  output: z.ZodType;
  /** Its `structuredContent` for a host that shows the answer card; a tool without one does not link the card. */
  cardOutput?: z.ZodType | undefined;
  /** The answer mode it asks in (`search` asks as `ask`), or null for a tool that asks the workspace nothing: admission counts those that ask. */
  mode: Mode | null;
  /** Answers one call whose arguments `input` parsed. Never throws: a failure is a tool result with `isError`. */
  run(args: z.output<Input>, context: ToolContext): Promise<CallToolResult>;
  /** For a tool that may run as an MCP task (docs/mcp.md#long-answers-as-tasks): the question its arguments ask. */
  asTask?: ((args: z.output<Input>) => AnswerToolInput) | undefined;
}

/** A tool's definition, its `run` typed by its own `input` schema. */
function tool<Input extends z.ZodType>(definition: ToolDefinition<Input>): ToolDefinition<Input> {
  return definition;
}

/** An answer tool (`ask`, `reason`, `build`): the workspace's answer in its mode, which the answer card shows. */
function answerTool(mode: Mode, title: string, description: string, task = false): ToolDefinition<typeof answerToolInputSchema> {
  return tool({
    asTask: task ? (args) => args : undefined,
    name: mode,
    title,
    description,
    input: answerToolInputSchema,
    output: answerToolOutputSchema,
    cardOutput: answerCardOutputSchema,
    mode,
    run: async (args, context) => {
      const answered = await context.answer(mode, args);
      if ("error" in answered) return toolError(answered.error);
      return answerResult(answered.output, context.links, context.card ? context.workspace : null);
    },
  });
}

/**
 * The workspace's tools (docs/architecture/mcp.md#mcp-tools). Descriptions are written for the model
 * that picks a tool: what it is for, when to prefer it, what comes back.
 */
export const TOOLS: readonly ToolDefinition[] = [
  answerTool(
    "ask",
    "Ask the workspace",
    "Ask the workspace's documents a question and get a short answer grounded in them, with numbered citations and a list of the sources (file, title, page, link). Use it first for factual questions about what the documents say. To follow up on an earlier answer, pass its `query_id`.",
  ),
  answerTool(
    "reason",
    "Reason over the workspace",
    "A thorough answer from the workspace's documents: the question broken down, the passages compared, the conclusion explained, every claim cited. Slower than `ask` (it can take minutes); prefer it when the question needs several documents or a careful comparison. Pass `query_id` to continue an earlier answer.",
    true,
  ),
  answerTool(
    "build",
    "Write a document from the workspace",
    "Write a document (a draft, a summary, a brief) from the workspace's documents, with footnote citations. `question` says what to write. Slower than `ask`. Pass `query_id` to revise an earlier document.",
    true,
  ),
  tool({
    name: "search",
    title: "Search the workspace",
    description:
      "Find the workspace's documents about a topic: returns `{results: [{id, title, url}]}`, the sources a short answer to the query cites. Pass a result's `id` to `fetch` for its text. (OpenAI's connector convention, as ChatGPT connectors and deep research use it.)",
    input: searchInputSchema,
    output: searchOutputSchema,
    mode: "ask",
    run: async (args, context) => {
      const answered = await context.answer("ask", { question: args.query, query_id: null });
      return "error" in answered ? toolError(answered.error) : searchResult(answered.output, context.workspace);
    },
  }),
  tool({
    name: "fetch",
    title: "Fetch a search result",
    description:
      "The text of one `search` result: `{id, title, text, url, metadata}`. `metadata.text_is` says whether `text` is the whole document or only the passage the workspace cited.",
    input: fetchInputSchema,
    output: fetchOutputSchema,
    mode: null,
    run: (args, context) => fetchTool(args.id, context),
  }),
];

/** The tool of a name, if there is one. */
export function toolNamed(name: string): ToolDefinition | undefined {
  return TOOLS.find((definition) => definition.name === name);
}

/** A tool as `tools/list` lists it: JSON Schemas of its arguments and its result, read-only hints, and the card it links. */
export interface ListedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown> & { type: "object" };
  outputSchema: Record<string, unknown> & { type: "object" };
  annotations: { title: string; readOnlyHint: true; openWorldHint: false; destructiveHint: false; idempotentHint: false };
  /** 2025-11-25: whether a call may ask to run as a task (2026-07-28's codec leaves it out). */
  execution?: { taskSupport: "optional" };
  _meta?: Record<string, unknown>;
}

/**
 * The `tools/list` entries, from the same zod schemas that validate the arguments; with `card`,
 * the answer tools link the answer card and declare the result it reads. JSON Schema draft-07
 * without `$schema`: the constructs used read the same in 2020-12 (the MCP default), and older
 * clients' validators (Ajv's default draft) compile them.
 */
export function listedTools(options: { card: boolean; tasks?: boolean } = { card: false }): ListedTool[] {
  return TOOLS.map((definition) => {
    const cardOutput = options.card ? definition.cardOutput : undefined;
    return {
      name: definition.name,
      title: definition.title,
      description: definition.description,
      inputSchema: jsonSchemaOf(definition.input, "input"),
      outputSchema: jsonSchemaOf(cardOutput ?? definition.output, "output"),
      // Answers read the workspace and change nothing; a query is a new turn, so not idempotent.
      annotations: {
        title: definition.title,
        readOnlyHint: true,
        openWorldHint: false,
        destructiveHint: false,
        idempotentHint: false,
      },
      // Never "required": the Agents SDK refuses such tools, and every call may stay synchronous.
      ...(options.tasks && definition.asTask ? { execution: { taskSupport: "optional" as const } } : {}),
      ...(cardOutput ? { _meta: cardToolMeta() } : {}),
    };
  });
}

function jsonSchemaOf(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> & { type: "object" } {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, target: "draft-7" }) as Record<string, unknown>;
  return { ...rest, type: "object" };
}

/** What `initialize` (or `server/discover`) tells the client about the tools, for its model. */
export function instructionsFor(workspace: string): string {
  return (
    `Tools over the documents of workspace '${workspace}' (a Workspace Knowledge Service). ` +
    "ask: a short grounded answer; reason: a thorough one (slower); build: a document. Each answer cites numbered sources " +
    "and gives a query_id to continue with. search and fetch follow OpenAI's connector convention."
  );
}

/** A call of a tool bound to the arguments its `input` schema parsed: all the edge needs to run it. */
export interface BoundToolCall {
  tool: ToolDefinition;
  run(context: ToolContext): Promise<CallToolResult>;
  /** What it asks in which mode, when the tool may run as a task (`reason`, `build`). */
  task: { mode: Mode; input: AnswerToolInput } | undefined;
}

/**
 * Checks a call's arguments against its tool's `input` schema (`reportInput`: issues quote what
 * was sent); on success, the call bound to the parsed arguments, so that what runs is what was checked.
 */
export function bindArguments<Input extends z.ZodType>(
  definition: ToolDefinition<Input>,
  args: unknown,
  reportInput = false,
): { call: BoundToolCall } | { error: z.ZodError } {
  const parsed = definition.input.safeParse(args, { reportInput });
  if (!parsed.success) return { error: parsed.error };
  const { asTask, mode } = definition;
  const task = asTask && mode ? { mode, input: asTask(parsed.data) } : undefined;
  return { call: { tool: definition, run: (context) => definition.run(parsed.data, context), task } };
}
