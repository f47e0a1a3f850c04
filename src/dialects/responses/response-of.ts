import type { TokenUsage } from "../../answer/answer-events.js";
import type { AdapterError } from "../../errors/adapter-error.js";
import { echoedSettings, type ResponseMeta } from "./response-meta.js";
import type { FunctionCallItem, OutputItem, OutputMessage, OutputText, ReasoningItem, ResponseObject, ResponseUsage } from "./response-object.js";
import type { ResponseState } from "./response-state.js";

/** How a response ended: completed with its usage, failed with its error, or cancelled by its caller. */
export type ResponseEnd =
  | { status: "completed"; usage: TokenUsage; at: number }
  | { status: "failed"; error: AdapterError; at: number }
  | { status: "cancelled"; at: number };

/** An output item's id: the response's own id under the item's prefix (`rs_…`, `msg_…`, `fc_…`; a call's `call_id` is `call_…`). */
export const itemIdOf = (meta: ResponseMeta, kind: "rs" | "msg" | "fc" | "call") => `${kind}_${meta.id.slice("resp_".length)}`;

/** The reasoning item as it stands. */
export function reasoningItem(meta: ResponseMeta, state: ResponseState): ReasoningItem {
  return { type: "reasoning", id: itemIdOf(meta, "rs"), summary: [{ type: "summary_text", text: state.reasoning }] };
}

/** The message's one content part as it stands. */
export function outputText(state: ResponseState): OutputText {
  return { type: "output_text", text: state.text, annotations: state.annotations, logprobs: [] };
}

/** The message item as it stands: completed once its citations came; its `phase` is `final_answer`. */
export function messageItem(meta: ResponseMeta, state: ResponseState): OutputMessage {
  const status = state.messageDone ? "completed" : "in_progress";
  // The answer is the final answer: the workspace's steps are the reasoning item, never commentary messages.
  return { type: "message", id: itemIdOf(meta, "msg"), status, role: "assistant", content: [outputText(state)], phase: "final_answer" };
}

/** The forced function's call as it stands (docs/structured-answers.md#a-forced-function): its arguments are the answer's text. */
export function functionCallItem(meta: ResponseMeta, state: ResponseState, name: string): FunctionCallItem {
  const status = state.messageDone ? "completed" : "in_progress";
  return { type: "function_call", id: itemIdOf(meta, "fc"), call_id: itemIdOf(meta, "call"), name, arguments: state.text, status, sources: state.sources };
}

/** The answer's item: the message, or the forced function's call. */
export function answerItem(meta: ResponseMeta, state: ResponseState): OutputMessage | FunctionCallItem {
  return meta.call ? functionCallItem(meta, state, meta.call.name) : messageItem(meta, state);
}

/** Usage as the Responses API reports it. */
export function responseUsage(usage: TokenUsage): ResponseUsage {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

/**
 * The response object of a state: `in_progress` with what is known (`usage` null), or ended
 * (completed with its usage, failed, cancelled). Every field OpenAI's and Open Responses' schemas
 * require is there: what the request sent, or the value that applied.
 */
export function responseOf(
  meta: ResponseMeta,
  state: ResponseState | null,
  end: ResponseEnd | null,
): ResponseObject {
  return {
    id: meta.id,
    object: "response",
    created_at: meta.createdAt,
    status: end?.status ?? "in_progress",
    completed_at: end?.status === "completed" ? end.at : null,
    error: end?.status === "failed" ? { code: "server_error", message: end.error.message } : null,
    incomplete_details: null,
    instructions: meta.instructions,
    max_output_tokens: meta.maxOutputTokens,
    model: meta.model,
    output: state ? outputOf(meta, state) : [],
    parallel_tool_calls: meta.parallelToolCalls,
    previous_response_id: meta.previousResponseId,
    reasoning: meta.reasoning,
    store: meta.store,
    temperature: meta.temperature,
    text: { format: meta.textFormat ?? { type: "text" } },
    tool_choice: meta.toolChoice,
    tools: meta.tools,
    top_p: meta.topP,
    truncation: meta.truncation,
    metadata: meta.metadata,
    usage: end?.status === "completed" ? responseUsage(end.usage) : null,
    ...(meta.user === null ? {} : { user: meta.user }),
    background: meta.background === true,
    ...(meta.settings ?? echoedSettings({})),
    ...(meta.conversation ? { conversation: { id: meta.conversation } } : {}),
  };
}

function outputOf(meta: ResponseMeta, state: ResponseState): OutputItem[] {
  return state.order.map((kind) => (kind === "reasoning" ? reasoningItem(meta, state) : answerItem(meta, state)));
}
