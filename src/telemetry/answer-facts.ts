import { ADAPTER, CREDENTIAL_HASH_PREFIX_LENGTH, GEN_AI, type GenAiOperation, HTTP, PROVIDER_NAME } from "./names.js";
import type { FactWriter, SpanFacts } from "./span-facts.js";

// What an answer's span records (docs/observability.md): the request's start, and the facts the
// answer's trace (`answer-trace.ts`) sets on it as the answer goes.

/** What an answer's span starts with: known once the edge admitted the request. */
export interface AnswerStart {
  /** `chat` for the OpenAI dialects; `execute_tool` for an MCP tool call. */
  operation: GenAiOperation;
  /** The model as the client named it (`ask`, `acme/ask`). */
  model: string;
  /** The interaction mode the model picked: the model that answers. */
  mode: string;
  workspace: string;
  stream: boolean;
  /** A hash of the client's credential (`Identity.principal`): only its first characters go on the span. */
  principal: string;
  /** Who asked (`Identity.account`: a key's name, a gateway identity; never a key). */
  account?: string | undefined;
  /** The MCP tool's name (`execute_tool` only). */
  tool?: string;
}

/** Token usage as the answer core counts it. */
export interface CountedUsage {
  promptTokens: number;
  completionTokens: number;
  reasoningTokens: number;
}

/** The facts of an answer's span, in the order the span has always listed them: what the request asked, then what the answer did. */
export class AnswerFacts implements SpanFacts {
  choiceCount: number | undefined = undefined;
  continued: boolean | undefined = undefined;
  inputMessages: string | undefined = undefined;
  /** Each choice's query id, by choice (a choice's query may be created before an earlier one's). */
  readonly queryIds: string[] = [];
  responseId: string | undefined = undefined;
  outputMessages: string | undefined = undefined;
  usage: CountedUsage | undefined = undefined;
  errorType: string | undefined = undefined;
  /** Each choice's finish reason, by choice, once the answer ended. */
  finishReasons: readonly string[] | undefined = undefined;
  completed: boolean | undefined = undefined;

  constructor(private readonly start: AnswerStart) {}

  write(out: FactWriter): void {
    const { start, usage } = this;
    out.fact(GEN_AI.operationName, start.operation);
    out.fact(GEN_AI.providerName, PROVIDER_NAME);
    out.fact(GEN_AI.requestModel, start.model);
    out.fact(GEN_AI.responseModel, start.mode);
    out.fact(GEN_AI.requestStream, start.stream);
    out.fact(ADAPTER.workspace, start.workspace);
    out.fact(ADAPTER.mode, start.mode);
    out.fact(ADAPTER.credentialHashPrefix, start.principal.slice(0, CREDENTIAL_HASH_PREFIX_LENGTH));
    out.fact(ADAPTER.clientKey, start.account);
    if (start.tool !== undefined) {
      out.fact(GEN_AI.toolName, start.tool);
      out.fact(GEN_AI.toolType, "function");
    }
    out.fact(GEN_AI.requestChoiceCount, this.choiceCount);
    out.fact(ADAPTER.continued, this.continued);
    out.fact(GEN_AI.inputMessages, this.inputMessages);
    out.fact(GEN_AI.conversationId, this.queryIds[0]);
    if (this.queryIds.length > 0) out.fact(ADAPTER.queryIds, dense(this.queryIds));
    out.fact(GEN_AI.responseId, this.responseId);
    out.fact(GEN_AI.outputMessages, this.outputMessages);
    if (usage) {
      out.fact(GEN_AI.inputTokens, usage.promptTokens);
      out.fact(GEN_AI.outputTokens, usage.completionTokens);
      out.fact(GEN_AI.reasoningOutputTokens, usage.reasoningTokens);
    }
    out.fact(HTTP.errorType, this.errorType);
    out.fact(GEN_AI.finishReasons, this.finishReasons);
    out.fact(ADAPTER.completed, this.completed);
  }
}

/** The values of a list filled by index, without its holes (the list itself when it has none). */
export function dense(values: readonly (string | undefined)[]): readonly string[] {
  for (let index = 0; index < values.length; index += 1) {
    if (values[index] === undefined) return values.filter((value): value is string => value !== undefined);
  }
  return values as readonly string[];
}
