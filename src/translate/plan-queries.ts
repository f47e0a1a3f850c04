import type { Mode } from "../config/config.js";
import { RequestValidationError } from "../errors/adapter-error.js";
import type { ChatCompletionRequest } from "../openai/chat-request.js";
import { extractPrompt } from "./extract-prompt.js";

/** One upstream query to run for one choice. */
export interface PlannedQuery {
  index: number;
  queryId: string;
  /** The `POST /queries` body (DESIGN.md, Contract item 1). */
  createBody: Record<string, unknown>;
}

/** What a chat request asks of the upstream: the prompt, the mode and one query per choice. */
export interface QueryPlan {
  prompt: string;
  mode: Mode;
  queries: PlannedQuery[];
}

/** The settings and effects planning needs. */
export interface PlanOptions {
  modeField: string;
  newQueryId: () => string;
}

/**
 * Plans the upstream queries of a request (§ Chat completion rules): the last user message is the
 * content, `model` the mode, and each of the `n` choices its own query with an id the adapter
 * chooses (DESIGN.md, Contract item 2). Keys of the request's `query` object are merged into the
 * create body; the keys the adapter sets itself are refused rather than silently overwritten.
 */
export function planQueries(request: ChatCompletionRequest, mode: Mode, options: PlanOptions): QueryPlan {
  const { prompt } = extractPrompt(request.messages);
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
  const queries = Array.from({ length: request.n ?? 1 }, (_, index) => {
    const queryId = options.newQueryId();
    return {
      index,
      queryId,
      createBody: { ...extra, content: prompt, id: queryId, [options.modeField]: mode },
    };
  });
  return { prompt, mode, queries };
}
