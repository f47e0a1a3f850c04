import { randomUUID } from "node:crypto";
import express, { type Express, type RequestHandler } from "express";
import type { Logger } from "pino";
import type { Authenticator } from "../auth/authenticate.js";
import type { ChatService } from "../chat/chat-service.js";
import type { Config } from "../config/config.js";
import type { Conversations } from "../conversations/conversations.js";
import type { Clock } from "../util/clock.js";
import type { WorkspaceClient } from "../upstream/workspace-client.js";
import type { ConcurrencyLimit } from "./concurrency-limit.js";
import { cors } from "./cors.js";
import { errorMiddleware, notFoundHandler } from "./error-response.js";
import { openApiDocument } from "./openapi.js";
import type { Lifecycle } from "./lifecycle.js";
import type { Metrics } from "../metrics/metrics.js";
import { chatCompletionsRouter } from "./routes/chat-completions.js";
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

/** Builds the adapter's Express app. It never listens: the entry point owns the port. */
export function createApp(dependencies: AppDependencies): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");
  app.use(requestLog(dependencies.logger, dependencies.metrics));
  app.use(cors(dependencies.config.corsOrigins));
  app.use(dependencies.lifecycle.track);
  app.use(
    express.json({
      limit: dependencies.config.bodyLimitBytes,
      type: ["application/json", "application/*+json"],
    }),
  );
  app.use(healthRouter({ client: dependencies.client, lifecycle: dependencies.lifecycle }));
  const openApi = openApiDocument({ version: dependencies.version, ...dependencies.config });
  app.get("/openapi.json", (_request, response) => {
    response.json(openApi);
  });
  app.get("/metrics", async (_request, response) => {
    response.setHeader("content-type", dependencies.metrics.registry.contentType);
    response.send(await dependencies.metrics.registry.metrics());
  });
  app.use(
    modelsRouter({
      created: dependencies.startedAt,
      authenticate: dependencies.authenticate,
      client: dependencies.client,
      clock: dependencies.clock,
      cacheSeconds: dependencies.config.modelsCacheSeconds,
    }),
  );
  app.use(
    chatCompletionsRouter({
      config: dependencies.config,
      chat: dependencies.chat,
      authenticate: dependencies.authenticate,
      conversations: dependencies.conversations,
      limit: dependencies.limit,
      lifecycle: dependencies.lifecycle,
      logger: dependencies.logger,
      newQueryId: dependencies.newQueryId,
    }),
  );
  app.use(notFoundHandler);
  app.use(errorMiddleware(dependencies.logger));
  return app;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * One log line per request, when it ends: id, route, workspace, mode, query ids, status and
 * latency. Never headers or message content, so no credential or prompt reaches the logs.
 */
function requestLog(logger: Logger, metrics: Metrics): RequestHandler {
  return (request, response, next) => {
    const started = performance.now();
    const incoming = request.headers["x-request-id"];
    const requestId = typeof incoming === "string" && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    response.locals.requestId = requestId;
    response.setHeader("x-request-id", requestId);
    response.setHeader("x-content-type-options", "nosniff");
    response.once("close", () => {
      const mode = String(response.locals.mode ?? "");
      const labels = { route: routeOf(request.path), mode, status: String(response.statusCode) };
      metrics.requests.inc(labels);
      metrics.requestSeconds.observe(labels, (performance.now() - started) / 1000);
      logger.info(
        {
          requestId,
          method: request.method,
          path: request.path,
          status: response.statusCode,
          workspace: response.locals.workspace,
          mode: response.locals.mode,
          queryIds: response.locals.queryIds,
          completed: response.writableFinished,
          ms: Math.round((performance.now() - started) * 10) / 10,
        },
        "request",
      );
    });
    next();
  };
}

const ROUTES = new Set(["/v1/chat/completions", "/v1/models", "/health", "/ready", "/metrics", "/openapi.json"]);

/** The route of a path, for metric labels: a fixed set, so that random paths cannot grow the label space. */
function routeOf(path: string): string {
  if (ROUTES.has(path)) return path;
  return path.startsWith("/v1/models/") ? "/v1/models/{id}" : "other";
}
