import type { Config } from "../../config/config.js";
import {
  compactedResponse,
  type CompactionItem,
  compactRequestSchema,
  inputTokensRequestSchema,
  NO_THREAD,
} from "../../dialects/responses/compaction.js";
import { type ReadInput, readConversation, readInput, type StoredInputItem } from "../../dialects/responses/read-input.js";
import type { InputItem } from "../../dialects/responses/response-request.js";
import { readResponseStructured } from "../../dialects/responses/structured-request.js";
import { checkStructuredSchema } from "../../dialects/structured-parameters.js";
import { InvalidRequestError } from "../../errors/adapter-error.js";
import { withInstructions } from "../../structured/instruction-block.js";
import type { TokenCounter } from "../../tokens/token-counter.js";
import { admit } from "../admission.js";
import { type AnswerRouteOptions, type EdgeSetting, readAnswerRequest, type ValidAnswerRequest } from "../answer-request.js";
import { sendUncached } from "../error-response.js";
import { errorResponse, workspaceHeader } from "../openapi.js";
import type { RequestContext } from "../request-context.js";
import { type ContinuationStores, continuationOf } from "../responses/response-continuation.js";
import { type Route, type RouteCall, route } from "../route-table.js";

/** What compaction and counting need: the edge, the stores a continuation is found in, and the tokenizer `usage` counts with. */
export interface CompactAndCountOptions extends AnswerRouteOptions, ContinuationStores {
  config: Pick<Config, EdgeSetting | "continuity">;
  tokens: TokenCounter;
}

/**
 * `POST /v1/responses/compact` and `POST /v1/responses/input_tokens` (docs/responses-api.md#compaction,
 * docs/responses-api.md#counting-input-tokens): authenticated, validated and in a workspace as a
 * response is, and admitted under the same per-process caps; neither asks the workspace anything, so
 * neither counts against the key's rate limits (as a takeover does not).
 */
export function compactAndCountRoutes(options: CompactAndCountOptions): Route[] {
  const { config } = options;
  const compactSchema = compactRequestSchema(config.limits);
  const countSchema = inputTokensRequestSchema(config.limits);
  const seconds = () => Math.floor(options.clock.now() / 1000);

  /** Admits a request that asks the workspace nothing: the caps only. */
  async function admitted<Body>(context: RequestContext, valid: ValidAnswerRequest<Body>): Promise<void> {
    const { principal, account } = valid.identity;
    await admit(context, { principal, account: account.id, workspace: valid.workspace, asksWorkspace: false }, options);
  }

  /**
   * A compaction: the user's messages kept, and one item whose content is the handle of the
   * workspace thread the conversation continues (bound to this key and workspace, for the thread
   * memory's lifetime). Given in a later turn's input, it continues that query.
   */
  async function compact({ request, response, context }: RouteCall): Promise<void> {
    const valid = await readAnswerRequest(request, compactSchema, options);
    const { body, identity, workspace } = valid;
    await admitted(context, valid);
    const id = options.ids.response();
    const conversation = readConversation(body.input ?? [], id);
    // A compaction asks nothing: no turn is read from the conversation.
    const input: ReadInput = { ...conversation, turn: { kind: "question", text: "" }, prompt: "" };
    const scope = { principal: identity.principal, workspace };
    const asked = { scope, previousResponseId: body.previous_response_id, conversationId: undefined };
    const { continueQueryId, previous, items } = await continuationOf(options, request, asked, input);
    let content = NO_THREAD;
    if (continueQueryId !== null) {
      content = options.ids.object("wst");
      await options.threads.bind(scope, `compaction:${content}`, continueQueryId);
    }
    const item: CompactionItem = { type: "compaction", id: options.ids.object("cmp"), encrypted_content: content };
    // The conversation compacted, counted as `usage` counts: the previous response's turn, then this input's messages.
    const previousInput: StoredInputItem[] = previous?.value.input ?? [];
    const previousMessages = readConversation(previousInput as InputItem[], id).messages.map((message) => message.text);
    const previousTurn = [...previousMessages, previous?.value.answer.text ?? ""];
    const texts = [...previousTurn, ...conversation.messages.map((message) => message.text)].filter((text) => text !== "");
    const [counted = 0] = await options.tokens.count([texts.join("\n")]);
    sendUncached(response, compactedResponse(id, seconds(), [...previousInput, ...items], item, counted));
  }

  /** The input tokens a response to this body would count (`usage.input_tokens`): what the workspace would be asked. */
  async function count({ request, response, context }: RouteCall): Promise<void> {
    const valid = await readAnswerRequest(request, countSchema, options);
    const { body, identity, workspace } = valid;
    if (body.conversation && body.previous_response_id) {
      throw new InvalidRequestError("Mutually exclusive parameters: give either previous_response_id or conversation, not both", {
        param: "conversation",
        code: "mutually_exclusive_parameters",
      });
    }
    const structured = readResponseStructured(body);
    await admitted(context, valid);
    // Once admitted, as on the answer routes: the limits count a request whose schema is refused.
    await checkStructuredSchema(structured, (value) => options.schemas.check(value));
    const input = readInput(body.input, options.ids.response());
    const conversationId = typeof body.conversation === "string" ? body.conversation : (body.conversation?.id ?? undefined);
    const scope = { principal: identity.principal, workspace };
    const asked = { scope, previousResponseId: body.previous_response_id, conversationId };
    const { prompt } = await continuationOf(options, request, asked, input);
    const [inputTokens = 0] = await options.tokens.count([structured ? withInstructions(prompt, structured) : prompt]);
    sendUncached(response, { object: "response.input_tokens", input_tokens: inputTokens });
  }

  const bearer = [{ bearer: [] }];
  const common = {
    "401": errorResponse("No bearer credential, or one the upstream refused"),
    "404": errorResponse("`previous_response_id`, a referenced item or a compaction names nothing of this credential and workspace"),
    "422": errorResponse("Invalid request (FastAPI-style `detail` list); `model` is required to compact"),
    "429": errorResponse("Too many requests in flight here"),
  };
  return [
    route("POST", "/v1/responses/compact", compact, {
      summary: "Compacts a conversation: its user messages, and one `compaction` item that carries its workspace thread into a later turn",
      security: bearer,
      parameters: [workspaceHeader],
      responses: { "200": { description: "`{id, object: \"response.compaction\", created_at, output, usage}`" }, ...common },
    }),
    route("POST", "/v1/responses/input_tokens", count, {
      summary: "Counts the input tokens of a response to this body, as its `usage.input_tokens` would (o200k)",
      security: bearer,
      parameters: [workspaceHeader],
      responses: { "200": { description: "`{object: \"response.input_tokens\", input_tokens}`" }, ...common },
    }),
  ];
}
