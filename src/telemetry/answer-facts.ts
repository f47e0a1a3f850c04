import { ADAPTER, CREDENTIAL_HASH_PREFIX_LENGTH, GEN_AI, type GenAiOperation, HTTP, PROVIDER_NAME } from "./names.js";
import { factKey, type FactWriter, type SpanFacts } from "./span-facts.js";

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

const OPERATION = factKey(GEN_AI.operationName);
const PROVIDER = factKey(GEN_AI.providerName);
const REQUEST_MODEL = factKey(GEN_AI.requestModel);
const RESPONSE_MODEL = factKey(GEN_AI.responseModel);
const STREAM = factKey(GEN_AI.requestStream);
const WORKSPACE = factKey(ADAPTER.workspace);
const MODE = factKey(ADAPTER.mode);
const CREDENTIAL_HASH_PREFIX = factKey(ADAPTER.credentialHashPrefix);
const CLIENT_KEY = factKey(ADAPTER.clientKey);
const TOOL_NAME = factKey(GEN_AI.toolName);
const TOOL_TYPE = factKey(GEN_AI.toolType);
const CHOICE_COUNT = factKey(GEN_AI.requestChoiceCount);
const CONTINUED = factKey(ADAPTER.continued);
const INPUT_MESSAGES = factKey(GEN_AI.inputMessages);
const CONVERSATION_ID = factKey(GEN_AI.conversationId);
const QUERY_IDS = factKey(ADAPTER.queryIds);
const RESPONSE_ID = factKey(GEN_AI.responseId);
const OUTPUT_MESSAGES = factKey(GEN_AI.outputMessages);
const INPUT_TOKENS = factKey(GEN_AI.inputTokens);
const OUTPUT_TOKENS = factKey(GEN_AI.outputTokens);
const REASONING_TOKENS = factKey(GEN_AI.reasoningOutputTokens);
const ERROR_TYPE = factKey(HTTP.errorType);
const FINISH_REASONS = factKey(GEN_AI.finishReasons);
const COMPLETED = factKey(ADAPTER.completed);

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
    out.fact(OPERATION, start.operation);
    out.fact(PROVIDER, PROVIDER_NAME);
    out.fact(REQUEST_MODEL, start.model);
    out.fact(RESPONSE_MODEL, start.mode);
    out.fact(STREAM, start.stream);
    out.fact(WORKSPACE, start.workspace);
    out.fact(MODE, start.mode);
    out.fact(CREDENTIAL_HASH_PREFIX, start.principal.slice(0, CREDENTIAL_HASH_PREFIX_LENGTH));
    out.fact(CLIENT_KEY, start.account);
    if (start.tool !== undefined) {
      out.fact(TOOL_NAME, start.tool);
      out.fact(TOOL_TYPE, "function");
    }
    out.fact(CHOICE_COUNT, this.choiceCount);
    out.fact(CONTINUED, this.continued);
    out.fact(INPUT_MESSAGES, this.inputMessages);
    out.fact(CONVERSATION_ID, this.queryIds[0]);
    if (this.queryIds.length > 0) out.fact(QUERY_IDS, dense(this.queryIds));
    out.fact(RESPONSE_ID, this.responseId);
    out.fact(OUTPUT_MESSAGES, this.outputMessages);
    if (usage) {
      out.fact(INPUT_TOKENS, usage.promptTokens);
      out.fact(OUTPUT_TOKENS, usage.completionTokens);
      out.fact(REASONING_TOKENS, usage.reasoningTokens);
    }
    out.fact(ERROR_TYPE, this.errorType);
    out.fact(FINISH_REASONS, this.finishReasons);
    out.fact(COMPLETED, this.completed);
  }
}

/** The values of a list filled by index, without its holes (the list itself when it has none). */
export function dense(values: readonly (string | undefined)[]): readonly string[] {
  for (let index = 0; index < values.length; index += 1) {
    if (values[index] === undefined) return values.filter((value): value is string => value !== undefined);
  }
  return values as readonly string[];
}
