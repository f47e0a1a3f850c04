import type { PlainMessage } from "../../core/plain-message.js";
import { RequestValidationError } from "../../errors/adapter-error.js";
import type { InputItem } from "./response-request.js";

/** An input item as stored and listed (`GET /v1/responses/{id}/input_items`): every item has an id. */
export type StoredInputItem = Record<string, unknown> & { id: string; type: string };

/** What a Responses request's input says, as the adapter uses it. */
export interface ReadInput {
  /** The last user message's text: the query's content. */
  prompt: string;
  /** The conversation so far, as continuity compares it. */
  messages: PlainMessage[];
  /** The input items with ids, as `input_items` lists them (references resolved by the caller). */
  items: StoredInputItem[];
  /** Ids named by `item_reference` items, in order. */
  references: string[];
}

/** The text of a message's content: a string, or its `input_text`/`output_text`/`text` parts joined by newlines. */
function contentText(content: InputItem["content"]): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((part) => (part.type === "input_text" || part.type === "output_text" || part.type === "text") && typeof part.text === "string")
    .map((part) => part.text as string)
    .join("\n");
}

/** A message item as `input_items` lists it: user/system/developer with input parts, assistant as an output message. */
function storedMessage(item: InputItem, id: string): StoredInputItem {
  const role = item.role ?? "user";
  if (role === "assistant") {
    return {
      id,
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: contentText(item.content), annotations: [], logprobs: [] }],
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

/**
 * Reads `input` (a string, or a list of items): the last user message is the prompt (as for chat
 * completions); messages become the conversation; `item_reference`s are collected for the caller
 * to resolve; other item types are kept as sent. Items without an id get one derived from the
 * response's, so every listed item can be paged `after`.
 */
export function readInput(input: string | InputItem[], responseId: string): ReadInput {
  const suffix = responseId.slice("resp_".length);
  const newId = (index: number) => `in_${suffix}_${index}`;
  if (typeof input === "string") {
    return { prompt: input, messages: [{ role: "user", text: input }], items: [storedMessage({ role: "user", content: input }, newId(0))], references: [] };
  }
  const messages: PlainMessage[] = [];
  const items: StoredInputItem[] = [];
  const references: string[] = [];
  let prompt: { text: string; index: number } | null = null;
  input.forEach((item, index) => {
    const id = item.id ?? newId(index);
    const type = item.type ?? (item.role ? "message" : "unknown");
    if (type === "item_reference") {
      if (item.id) references.push(item.id);
      items.push({ ...item, id, type });
      return;
    }
    if (type !== "message") {
      items.push({ ...item, id, type });
      return;
    }
    const text = contentText(item.content);
    messages.push({ role: item.role ?? "user", text });
    if ((item.role ?? "user") === "user") prompt = { text, index };
    items.push(storedMessage(item, id));
  });
  const last = prompt as { text: string; index: number } | null;
  if (!last) {
    throw new RequestValidationError([{ loc: ["body", "input"], msg: "At least one message with role 'user' is required", type: "value_error" }]);
  }
  if (last.text.trim() === "") {
    throw new RequestValidationError([
      { loc: ["body", "input", last.index, "content"], msg: "The last user message has no text", type: "value_error" },
    ]);
  }
  return { prompt: last.text, messages, items, references };
}
