import type { PlainMessage } from "../../core/plain-message.js";
import { RequestValidationError } from "../../errors/adapter-error.js";
import type { InputItem } from "./response-request.js";

/** An input item as stored and listed (`GET /v1/responses/{id}/input_items`): every item has an id. */
export type StoredInputItem = Record<string, unknown> & { id: string; type: string };

/** A tool's result handed back (`function_call_output`, `custom_tool_call_output`): the call it answers, its output as text. */
export interface ToolOutput {
  callId: string;
  output: string;
  /** Where it is in `input`, for an error naming it. */
  index: number;
}

/** What a turn asks: a user message's text, or the results of tools it called (docs/responses-api.md#a-tools-result-handed-back). */
export type InputTurn =
  | { kind: "question"; text: string }
  /** Tool outputs after the last user message; `question` is that message's text, if there is one. */
  | { kind: "tool_results"; outputs: ToolOutput[]; question: string | null };

/** A call a tool output may answer: its function's name and arguments as the input carries them. */
export interface KnownCall {
  name: string;
  arguments: string;
}

/** What a Responses request's input says, as the adapter uses it. */
export interface ReadInput {
  /** What the turn asks. */
  turn: InputTurn;
  /** The last user message's text (the query's content for a question), or "" when there is none. */
  prompt: string;
  /** The conversation so far, as continuity compares it. */
  messages: PlainMessage[];
  /** The input items with ids, as `input_items` lists them (references resolved by the caller). */
  items: StoredInputItem[];
  /** Ids named by `item_reference` items, in order. */
  references: string[];
  /** The content of `compaction` items (docs/responses-api.md#compaction), in order. */
  compactions: string[];
  /** The function and custom tool calls the input carries, by `call_id`. */
  calls: Map<string, KnownCall>;
}

const TOOL_OUTPUTS = new Set(["function_call_output", "custom_tool_call_output"]);

/** The text of a message's content: a string, or its `input_text`/`output_text`/`text` parts joined by newlines. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((part: { type?: unknown; text?: unknown }) => (part.type === "input_text" || part.type === "output_text" || part.type === "text") && typeof part.text === "string")
    .map((part: { text: string }) => part.text)
    .join("\n");
}

/** A message item as `input_items` lists it: user/system/developer with input parts, assistant as an output message (its `phase` kept). */
function storedMessage(item: InputItem, id: string): StoredInputItem {
  const role = item.role ?? "user";
  if (role === "assistant") {
    return {
      id,
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: contentText(item.content), annotations: [], logprobs: [] }],
      ...(item.phase ? { phase: item.phase } : {}),
    };
  }
  const content =
    typeof item.content === "string"
      ? [{ type: "input_text", text: item.content }]
      : (item.content ?? []).map((part) => (part.type === "text" ? { ...part, type: "input_text" } : part));
  return { id, type: "message", role, status: "completed", content };
}

/** An item as stored and listed with an id: a message in its listed shape, any other item as sent. */
export function storedItem(item: InputItem, id: string): StoredInputItem {
  const type = item.type ?? (item.role ? "message" : "unknown");
  return type === "message" ? storedMessage(item, id) : { ...item, id, type };
}

/** The call a `function_call` or `custom_tool_call` item makes, if it is one. */
function callOf(item: Record<string, unknown>): [string, KnownCall] | null {
  if ((item.type !== "function_call" && item.type !== "custom_tool_call") || typeof item.call_id !== "string" || typeof item.name !== "string") return null;
  const args = item.type === "function_call" ? item.arguments : item.input;
  return [item.call_id, { name: item.name, arguments: typeof args === "string" ? args : "" }];
}

/** The calls among output items (a stored response's output, a conversation's items), by `call_id`. */
export function callsOf(items: readonly unknown[]): Map<string, KnownCall> {
  const calls = new Map<string, KnownCall>();
  for (const item of items) {
    const call = typeof item === "object" && item !== null ? callOf(item as Record<string, unknown>) : null;
    if (call) calls.set(...call);
  }
  return calls;
}

/** A conversation as `input` gives it, before the turn is read from it (`readInput`). */
export type ReadConversation = Omit<ReadInput, "turn" | "prompt"> & {
  /** The last user message and where it is, or null. */
  question: { text: string; index: number } | null;
  /** Tool outputs after the last user message. */
  outputs: ToolOutput[];
};

/**
 * Reads a conversation from `input` (a string, or a list of items): messages become the
 * conversation; `item_reference`s and `compaction`s are collected for the caller to resolve; calls
 * and tool outputs are noted; other item types are kept as sent. Items without an id get one derived
 * from the response's, so every listed item can be paged `after`.
 */
export function readConversation(input: string | InputItem[], responseId: string): ReadConversation {
  const suffix = responseId.slice("resp_".length);
  const newId = (index: number) => `in_${suffix}_${index}`;
  if (typeof input === "string") {
    const items = [storedMessage({ role: "user", content: input }, newId(0))];
    const question = { text: input, index: 0 };
    return { question, outputs: [], messages: [{ role: "user", text: input }], items, references: [], compactions: [], calls: new Map() };
  }
  const messages: PlainMessage[] = [];
  const items: StoredInputItem[] = [];
  const references: string[] = [];
  const compactions: string[] = [];
  const calls = new Map<string, KnownCall>();
  let outputs: ToolOutput[] = [];
  let question: { text: string; index: number } | null = null;
  input.forEach((item, index) => {
    const id = item.id ?? newId(index);
    const type = item.type ?? (item.role ? "message" : "unknown");
    items.push(type === "message" ? storedMessage(item, id) : { ...item, id, type });
    if (type === "item_reference" && item.id) references.push(item.id);
    if (type === "compaction") compactions.push(typeof item.encrypted_content === "string" ? item.encrypted_content : "");
    const call = callOf(item);
    if (call) calls.set(...call);
    if (TOOL_OUTPUTS.has(type)) outputs.push({ callId: typeof item.call_id === "string" ? item.call_id : "", output: toolOutputText(item.output), index });
    if (type !== "message") return;
    const text = contentText(item.content);
    messages.push({ role: item.role ?? "user", text });
    if ((item.role ?? "user") === "user") {
      question = { text, index };
      // Tool outputs before a user message are history; the message is what the turn asks.
      outputs = [];
    }
  });
  return { question, outputs, messages, items, references, compactions, calls };
}

/**
 * Reads `input` as a turn to answer: the last user message is the question (as for chat
 * completions), unless tool outputs follow it, which are then what the turn hands back
 * (docs/responses-api.md#a-tools-result-handed-back). A turn with neither is a 422.
 */
export function readInput(input: string | InputItem[], responseId: string): ReadInput {
  const { question, outputs, ...conversation } = readConversation(input, responseId);
  return { ...conversation, turn: turnOf(question, outputs), prompt: question?.text ?? "" };
}

/** What the turn asks: the tool outputs after the last user message, or that message (which must have text). */
function turnOf(question: { text: string; index: number } | null, outputs: ToolOutput[]): InputTurn {
  if (outputs.length > 0) return { kind: "tool_results", outputs, question: question?.text ?? null };
  if (!question) {
    throw new RequestValidationError([
      { loc: ["body", "input"], msg: "At least one message with role 'user', or a function_call_output, is required", type: "value_error" },
    ]);
  }
  if (question.text.trim() === "") {
    throw new RequestValidationError([
      { loc: ["body", "input", question.index, "content"], msg: "The last user message has no text", type: "value_error" },
    ]);
  }
  return { kind: "question", text: question.text };
}

/** A tool's output as text: a string as sent, or its text parts joined by newlines (images and files are not sent). */
function toolOutputText(output: unknown): string {
  return typeof output === "string" ? output : contentText(output);
}
