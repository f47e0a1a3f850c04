import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { Authenticator } from "../../auth/authenticate.js";
import type { ChatJob, ChatService } from "../../answer/answer-service.js";
import type { Config } from "../../config/config.js";
import { type ConversationHints, type Conversations, conversationIdFrom } from "../../conversations/conversations.js";
import { ClientClosedError, toAdapterError } from "../../errors/adapter-error.js";
import type { ChatCompletionChunk } from "../../dialects/chat-completions/chat-completion.js";
import { chatCompletionRequestSchema } from "../../dialects/chat-completions/chat-request.js";
import { planQueries } from "../../plan/plan-queries.js";
import type { ConcurrencyLimit } from "../concurrency-limit.js";
import { reportError, sendJson } from "../error-response.js";
import type { Lifecycle } from "../lifecycle.js";
import { abortWhenClientLeaves, readJsonBody } from "../request-body.js";
import { factsOf, whenClosed } from "../request-log.js";
import { SseWriter } from "../sse-writer.js";
import { validateChatRequest } from "../validate-chat-request.js";

/** What the chat route needs. */
export interface ChatRouteOptions {
  config: Pick<
    Config,
    | "maxChoices"
    | "maxMessages"
    | "maxJsonDepth"
    | "bodyLimitBytes"
    | "defaultWorkspace"
    | "modeField"
    | "sseKeepAliveMs"
    | "conversationIdHeaders"
  >;
  chat: ChatService;
  authenticate: Authenticator;
  conversations: Conversations;
  limit: ConcurrencyLimit;
  lifecycle: Lifecycle;
  logger: Logger;
  newQueryId?: (() => string) | undefined;
}

/**
 * `POST /v1/chat/completions` (docs/architecture.md#the-chat-completion-resource), on plain `node:http`: the hot path skips
 * Express's router and request decoration, which cost more than half of its throughput (measured,
 * docs/benchmarks.md). Reads like the data flow (docs/architecture.md#data-flow-of-one-request): read → authenticate → validate →
 * find the conversation → plan → run → translate → write.
 */
export function createChatHandler(
  options: ChatRouteOptions,
): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  const schema = chatCompletionRequestSchema(options.config);
  const newQueryId = options.newQueryId ?? randomUUID;

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const identity = options.authenticate(request);
    const raw = await readJsonBody(request, options.config.bodyLimitBytes);
    const { config } = options;
    const { body, model, workspace } = validateChatRequest(request, raw, schema, config.defaultWorkspace, config.maxJsonDepth);
    const release = options.limit.acquire(workspace);
    whenClosed(response, release);
    const scope = { principal: identity.principal, workspace };
    const hints: ConversationHints = {
      conversationId: conversationIdFrom(request.headers, config.conversationIdHeaders),
      messages: body.messages,
    };
    const continueQueryId = body.query_id ?? ((body.n ?? 1) === 1 ? await options.conversations.find(scope, hints) : null);
    const plan = planQueries(body, model.mode, { modeField: config.modeField, newQueryId, continueQueryId });
    const queryIds = plan.queries.map((query) => query.queryId);
    Object.assign(factsOf(response), { workspace, mode: model.mode, queryIds, continued: plan.continued });
    response.setHeader("service-query-id", queryIds.join(", "));

    const remember = (answer: string) =>
      options.conversations.remember(scope, hints, { promptIndex: plan.promptIndex, answer, queryId: queryIds[0] as string });
    const job: ChatJob = {
      model: body.model,
      plan,
      caller: { credential: identity.upstreamCredential, workspace },
      controller: abortWhenClientLeaves(response),
    };
    if (body.stream) {
      const includeUsage = body.stream_options?.include_usage === true;
      await writeStream(response, await options.chat.startStream({ ...job, onAnswered: remember }, { includeUsage }));
      return;
    }
    const completion = await options.chat.complete(job);
    response.setHeader("cache-control", "no-store");
    sendJson(response, completion);
    // Remembered after the answer is written, in the same turn of the event loop: no next turn of
    // this client can be read before it (and a Redis SET is on the wire before any later lookup).
    remember(completion.choices[0]?.message.content ?? "").catch((error: unknown) =>
      options.logger.warn({ err: { message: (error as Error).message } }, "conversation could not be remembered"),
    );
  }

  /** Streams the chunks; after the headers, a failure is an error frame and `[DONE]`, never a throw. */
  async function writeStream(response: ServerResponse, chunks: AsyncGenerator<ChatCompletionChunk>): Promise<void> {
    const writer = new SseWriter(response, options.config.sseKeepAliveMs);
    writer.open();
    const unregister = options.lifecycle.trackStream(writer);
    try {
      for await (const chunk of chunks) {
        await writer.send(chunk);
        if (writer.isClosed) break;
      }
      await writer.end();
    } catch (error) {
      const adapterError = toAdapterError(error);
      if (writer.isClosed || adapterError instanceof ClientClosedError) return;
      if (adapterError.status >= 500) options.logger.warn({ err: { message: adapterError.message } }, "stream failed");
      await writer.fail(adapterError);
    } finally {
      unregister();
      await chunks.return(undefined);
    }
  }

  return async (request, response) => {
    try {
      await handle(request, response);
    } catch (error) {
      if (toAdapterError(error) instanceof ClientClosedError && response.destroyed) return;
      reportError(error, response, options.logger, factsOf(response).requestId);
    }
  };
}
