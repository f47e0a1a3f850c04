import type { Mode } from "../core/modes.js";
import { RequestValidationError } from "../errors/adapter-error.js";
import type { ChatCompletionRequest } from "../dialects/chat-completions/chat-request.js";
import { extractPrompt } from "../dialects/chat-completions/extract-prompt.js";

/** One upstream query to run for one choice. */
export interface PlannedQuery {
  index: number;
  queryId: string;
  /** The `POST /queries` body (docs/upstream-assumptions.md#create). */
  createBody: Record<string, unknown> & { id: string };
}

/** What a chat request asks of the upstream: the prompt, the mode and one query per choice. */
export interface QueryPlan {
  prompt: string;
  /** Index of the prompt's message in `messages`. */
  promptIndex: number;
  /** Whether choice 0 continues an existing query (a second turn of its thread). */
  continued: boolean;
  mode: Mode;
  queries: PlannedQuery[];
}

/** The settings and effects planning needs. */
export interface PlanOptions {
  modeField: string;
  newQueryId: () => string;
  /** An existing query to continue (explicit `query_id`, or a remembered conversation); n must be 1. */
  continueQueryId?: string | null | undefined;
}

/**
 * Plans the upstream queries of a request (docs/architecture.md#the-chat-completion-resource): the last user message is the
 * content, `model` the mode, and each of the `n` choices its own query with an id the adapter
 * chooses (docs/upstream-assumptions.md#query-ids-and-lost-creates), or the query a conversation continues. Keys of the request's `query` object are merged into the
 * create body; the keys the adapter sets itself are refused rather than silently overwritten.
 */
export function planQueries(request: ChatCompletionRequest, mode: Mode, options: PlanOptions): QueryPlan {
  const { prompt, messageIndex } = extractPrompt(request.messages);
  const choices = request.n ?? 1;
  if (options.continueQueryId && choices > 1) {
    throw new RequestValidationError([
      { loc: ["body", "n"], msg: "A continued query ('query_id') answers one choice; n must be 1", type: "value_error", input: choices },
    ]);
  }
  const extra = request.query ?? {};
  const reserved = ["content", "id", options.modeField].filter((key) => Object.hasOwn(extra, key));
  if (reserved.length > 0) {
    throw new RequestValidationError(
      reserved.map((key) => ({
        loc: ["body", "query", key],
        msg: `'${key}' is set by the adapter from ${key === "content" ? "the last user message" : key === "id" ? "the conversation" : "'model'"}; remove it from 'query'`,
        type: "value_error",
        input: extra[key],
      })),
    );
  }
  const queries = Array.from({ length: choices }, (_, index) => {
    const queryId = (index === 0 && options.continueQueryId) || options.newQueryId();
    return {
      index,
      queryId,
      createBody: { ...extra, content: prompt, id: queryId, [options.modeField]: mode },
    };
  });
  return { prompt, promptIndex: messageIndex, continued: Boolean(options.continueQueryId), mode, queries };
}
