import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import express, { type Express } from "express";
import type { Logger } from "pino";
import type { Authenticator } from "../auth/authenticate.js";
import type { ChatService } from "../answer/answer-service.js";
import type { Config } from "../config/config.js";
import type { Conversations } from "../conversations/conversations.js";
import type { Metrics } from "../metrics/metrics.js";
import type { WorkspaceClient } from "../upstream/workspace-client.js";
import type { Clock } from "../util/clock.js";
import type { ConcurrencyLimit } from "./concurrency-limit.js";
import { corsHandler } from "./cors.js";
import { errorMiddleware, notFoundHandler } from "./error-response.js";
import type { Lifecycle } from "./lifecycle.js";
import { openApiDocument } from "./openapi.js";
import { observeRequest, pathOf } from "./request-log.js";
import { createChatHandler } from "./routes/chat-completions.js";
import { healthRouter } from "./routes/health.js";
import { modelsRouter } from "./routes/models.js";

/** Everything the HTTP app is built from; `main.ts` wires the real ones, tests their own. */
export interface AppDependencies {
  config: Pick<
    Config,
    | "maxChoices"
    | "maxMessages"
    | "maxJsonDepth"
    | "corsOrigins"
    | "defaultWorkspace"
    | "modeField"
    | "bodyLimitBytes"
    | "sseKeepAliveMs"
    | "conversationIdHeaders"
    | "modelsCacheSeconds"
  >;
  chat: ChatService;
  authenticate: Authenticator;
  conversations: Conversations;
  clock: Clock;
  limit: ConcurrencyLimit;
  lifecycle: Lifecycle;
  metrics: Metrics;
  client: WorkspaceClient;
  logger: Logger;
  /** The package version, for the OpenAPI document. */
  version: string;
  /** `created` of the listed models: the time the adapter started, in seconds. */
  startedAt: number;
  newQueryId?: () => string;
}

const CHAT_PATH = "/v1/chat/completions";

/**
 * Builds the adapter's request listener. It never listens: the entry point owns the port. Every
 * request is observed (request id, log line, metrics), answered for CORS and admitted by the
 * lifecycle; `POST /v1/chat/completions`, the hot path, goes to a plain `node:http` handler, and
 * everything else (models, health, metrics, OpenAPI, unknown paths) to an Express app.
 */
export function createApp(dependencies: AppDependencies): RequestListener {
  const { logger, metrics, lifecycle } = dependencies;
  const handleCors = corsHandler(dependencies.config.corsOrigins);
  const chat = createChatHandler({ ...dependencies, newQueryId: dependencies.newQueryId });
  const routes = expressRoutes(dependencies);
  return (request: IncomingMessage, response: ServerResponse) => {
    observeRequest(request, response, logger, metrics);
    if (handleCors(request, response)) return;
    const path = pathOf(request.url);
    if (!lifecycle.admit(path, response)) return;
    if (request.method === "POST" && path === CHAT_PATH) {
      void chat(request, response);
      return;
    }
    routes(request, response);
  };
}

/** The routes off the hot path, in Express: one error middleware maps what they throw. */
function expressRoutes(dependencies: AppDependencies): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");
  app.use(healthRouter({ client: dependencies.client, lifecycle: dependencies.lifecycle }));
  app.use(
    modelsRouter({
      created: dependencies.startedAt,
      authenticate: dependencies.authenticate,
      client: dependencies.client,
      clock: dependencies.clock,
      cacheSeconds: dependencies.config.modelsCacheSeconds,
    }),
  );
  const openApi = openApiDocument({ version: dependencies.version, ...dependencies.config });
  app.get("/openapi.json", (_request, response) => {
    response.json(openApi);
  });
  app.get("/metrics", async (_request, response) => {
    response.setHeader("content-type", dependencies.metrics.registry.contentType);
    response.send(await dependencies.metrics.registry.metrics());
  });
  app.use(notFoundHandler);
  app.use(errorMiddleware(dependencies.logger));
  return app;
}
