import { randomUUID } from "node:crypto";
import { type Request, type Response, Router } from "express";
import type { ChatService } from "../../chat/chat-service.js";
import type { Config } from "../../config/config.js";
import type { Logger } from "pino";
import {
  ClientClosedError,
  RequestValidationError,
  toAdapterError,
  type ValidationIssue,
} from "../../errors/adapter-error.js";
import type { ChatCompletionChunk } from "../../openai/chat-completion.js";
import { chatCompletionRequestSchema } from "../../openai/chat-request.js";
import { parseModel } from "../../translate/parse-model.js";
import { planQueries } from "../../translate/plan-queries.js";
import { abortWhenClientLeaves, requireJsonBody } from "../request-body.js";
import { bearerCredential, resolveWorkspace } from "../request-context.js";
import { SseWriter } from "../sse-writer.js";
import { toValidationIssues } from "../validation-issues.js";

/** What the chat route needs. */
export interface ChatRouteOptions {
  config: Pick<Config, "maxChoices" | "defaultWorkspace" | "modeField" | "sseKeepAliveMs">;
  logger?: Logger;
  chat: ChatService;
  newQueryId?: () => string;
}

/**
 * `POST /v1/chat/completions` (§ Chat completion rules). Reads like the data flow of DESIGN.md:
 * authenticate → validate → plan → run → translate → write.
 */
export function chatCompletionsRouter(options: ChatRouteOptions): Router {
  const schema = chatCompletionRequestSchema({ maxChoices: options.config.maxChoices });
  const newQueryId = options.newQueryId ?? randomUUID;
  const router = Router();

  router.post("/v1/chat/completions", async (request: Request, response: Response) => {
    const credential = bearerCredential(request);
    const body = requireJsonBody(request);
    const parsed = schema.safeParse(body, { reportInput: true });
    const issues: ValidationIssue[] = parsed.success ? [] : toValidationIssues(parsed.error.issues, "body");
    const model = parsed.success ? parseModel(parsed.data.model) : undefined;
    const workspace = resolveWorkspace(request, model?.workspace, options.config.defaultWorkspace);
    if ("issue" in workspace) issues.unshift(workspace.issue);
    if (!parsed.success || !model || "issue" in workspace || issues.length > 0) {
      throw new RequestValidationError(issues);
    }
    const plan = planQueries(parsed.data, model.mode, { modeField: options.config.modeField, newQueryId });
    response.locals.workspace = workspace.workspace;
    response.locals.mode = model.mode;
    response.locals.queryIds = plan.queries.map((query) => query.queryId);
    response.setHeader("service-query-id", plan.queries.map((query) => query.queryId).join(", "));

    const job = {
      model: parsed.data.model,
      plan,
      caller: { credential, workspace: workspace.workspace },
      signal: abortWhenClientLeaves(response),
    };
    if (parsed.data.stream) {
      const includeUsage = parsed.data.stream_options?.include_usage === true;
      await writeStream(response, await options.chat.startStream(job, { includeUsage }));
      return;
    }
    const completion = await options.chat.complete(job);
    response.setHeader("cache-control", "no-store");
    response.json(completion);
  });

  /** Streams the chunks; after the headers, a failure is an error frame and `[DONE]`, never a throw. */
  async function writeStream(response: Response, chunks: AsyncGenerator<ChatCompletionChunk>): Promise<void> {
    const writer = new SseWriter(response, options.config.sseKeepAliveMs);
    writer.open();
    try {
      for await (const chunk of chunks) {
        await writer.send(chunk);
        if (writer.isClosed) break;
      }
      await writer.end();
    } catch (error) {
      const adapterError = toAdapterError(error);
      if (writer.isClosed || adapterError instanceof ClientClosedError) return;
      if (adapterError.status >= 500) options.logger?.warn({ err: { message: adapterError.message } }, "stream failed");
      await writer.fail(adapterError);
    } finally {
      await chunks.return(undefined);
    }
  }

  return router;
}
