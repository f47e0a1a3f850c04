import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import express from "express";
import type { Logger } from "pino";
import type { AnswerService } from "../answer/answer-service.js";
import type { Authenticator } from "../auth/authenticate.js";
import type { DocumentLinkSigner } from "../auth/document-links.js";
import type { Config, OAuthSettings } from "../config/config.js";
import type { Continuity } from "../continuity/continuity.js";
import type { DocumentReader } from "../core/document-reader.js";
import { MethodNotAllowedError, NotFoundError } from "../errors/adapter-error.js";
import type { RateLimits } from "../limits/rate-limits.js";
import type { Metrics } from "../metrics/metrics.js";
import type { OAuthAttemptLimits } from "../oauth/attempt-limits.js";
import type { OAuthFetch } from "../oauth/metadata-fetch.js";
import type { OAuthStorage } from "../oauth/oauth-storage.js";
import { createOAuthEdge } from "../oauth/oauth-edge.js";
import type { SecretBox } from "../oauth/secret-box.js";
import type { TokenCounter } from "../tokens/token-counter.js";
import { conversationsRoutes } from "./routes/conversations.js";
import type { WorkspaceClient } from "../upstream/workspace-client.js";
import type { Clock } from "../util/clock.js";
import { type Ids, randomIds } from "../util/ids.js";
import type { ConcurrencyLimit } from "../limits/concurrency-limit.js";
import type { AnswerRouteOptions } from "./answer-request.js";
import { AnswerRunner } from "./answer-runner.js";
import { SchemaValidation } from "../structured/schema-validator.js";
import { ChatUiHousekeeping } from "./chat-ui-housekeeping.js";
import { corsHandler } from "./cors.js";
import { edgeGuard } from "./edge-guard.js";
import { errorMiddleware, sendError } from "./error-response.js";
import type { Lifecycle } from "./lifecycle.js";
import { openApiDocument } from "./openapi.js";
import { pathOf, type RequestContext, type RequestContexts } from "./request-context.js";
import { type Route, RouteTable } from "./route-table.js";
import { chatCompletionsRoute } from "./routes/chat-completions.js";
import { documentRoutes } from "./routes/documents.js";
import { metricsRoutes } from "./routes/metrics.js";
import { playgroundRoutes } from "./routes/playground.js";
import { healthRoutes } from "./routes/health.js";
import { type McpRoutes, mcpRoutes } from "./routes/mcp.js";
import { oauthRoutes } from "./routes/oauth.js";
import { modelsRoutes } from "./routes/models.js";
import { responsesRoutes } from "./routes/responses.js";
import { usageRoutes, type UsageRouteOptions } from "./routes/usage.js";
import type { KeepAliveSweeps } from "./sse-writer.js";

/** Everything the HTTP app is built from; `createAdapter` wires the real ones, tests their own. */
export interface AppDependencies {
  /** The sections of the configuration the routes read (docs/configuration.md). */
  config: Pick<Config, "server" | "upstream" | "auth" | "limits" | "answers" | "continuity" | "mcp" | "oauth" | "metrics">;
  answers: AnswerService;
  /** Counts the usage of the adapter's own answers. */
  tokens: TokenCounter;
  authenticate: Authenticator;
  /** The usage ledger the runner charges each answer to, and the usage endpoint's guard, when usage is counted (docs/governance.md#usage). */
  usage?: Omit<UsageRouteOptions, "clock"> | undefined;
  /** What carries answers from one request to the next: thread memory, stored and background responses, conversations. */
  continuity: Continuity;
  clock: Clock;
  /** The ids the adapter makes (random unless a test fixes them). */
  ids?: Ids;
  limit: ConcurrencyLimit;
  /** Limits per client key and workspace (`RATE_LIMIT_*`); undefined when none is configured. */
  rateLimits?: RateLimits | undefined;
  lifecycle: Lifecycle;
  facts: RequestContexts;
  sweeps: KeepAliveSweeps;
  metrics: Metrics;
  client: WorkspaceClient;
  logger: Logger;
  /** The package version, for the OpenAPI document. */
  version: string;
  /** `created` of the listed models: the time the adapter started, in seconds. */
  startedAt: number;
  /** The base URL of the adapter's document page, when it serves the embedded workspace's documents. */
  documentPage?: () => string;
  /** The documents that page shows (the embedded workspace's). */
  documents?: DocumentReader;
  /** Signs the links to that page, where client keys are listed and the page asks for one (docs/trying-it.md#the-embedded-workspace). */
  documentLinks?: DocumentLinkSigner | undefined;
  /** The OAuth authorization server's storage, keys and attempt limits, with `MCP_OAUTH=on` (docs/mcp-oauth.md). */
  oauth?:
    | {
      storage: OAuthStorage;
      box: SecretBox;
      attempts: OAuthAttemptLimits;
      metadataFetch: OAuthFetch;
      /** Whether a key typed at the consent page is an admin's or the metrics scraper's: never sent upstream. */
      reservedKey?: ((key: string) => boolean) | undefined;
    }
    | undefined;
}

/**
 * The routes of `MCP_OAUTH=on`: the OAuth edge, and the one MCP endpoint (`/mcp`'s handler, its
 * tasks and their counts) behind it, authenticating with the edge's identities.
 */
function oauthRoutesOf(dependencies: AppDependencies, mcp: McpRoutes, settings: OAuthSettings, oauth: NonNullable<AppDependencies["oauth"]>): Route[] {
  const { client, logger, clock } = dependencies;
  const edge = createOAuthEdge({ settings, ...oauth, client, logger, clock });
  const behindOAuth = mcp.behind({ authenticate: edge.authenticate, upstreamRejected: edge.keyRejected });
  return oauthRoutes({ edge, mcp: behindOAuth, logger: dependencies.logger });
}

/**
 * What every answer route is built from: the adapter's one answer runner (and one `Ids`), and the
 * edge's parts (docs/architecture.md#one-runner-one-admission).
 */
function answeringOf(dependencies: AppDependencies): AnswerRouteOptions {
  const { config, logger, facts, lifecycle, continuity } = dependencies;
  const ids = dependencies.ids ?? randomIds;
  // The caller's schemas, checked once and kept by hash: by the routes (a 400), the runner (validating answers).
  const { schemaMaxBytes: maxBytes, schemaMaxDepth: maxDepth } = config.answers.structured;
  const schemas = new SchemaValidation({ maxBytes, maxDepth });
  const runner = new AnswerRunner({
    answers: dependencies.answers,
    schemas,
    tokens: dependencies.tokens,
    background: continuity.background,
    lifecycle,
    facts,
    logger,
    modeField: config.upstream.modeField,
    ids,
    owners: continuity.owners,
    sharedKeyQueryFields: new Set(config.upstream.sharedKeyQueryFields),
    ledger: dependencies.usage?.ledger,
    answerTokens: config.limits.answerTokens,
    rateLimits: dependencies.rateLimits,
  });
  const { authenticate, limit, rateLimits, sweeps, clock } = dependencies;
  return { runner, schemas, authenticate, limit, rateLimits, facts, sweeps, clock, ids, logger };
}

/** Every route of the adapter, in one list (docs/architecture.md#modules). */
function routesOf(dependencies: AppDependencies, table: () => RouteTable): Route[] {
  const { config, metrics, logger, continuity } = dependencies;
  const answering = answeringOf(dependencies);
  const housekeeping = new ChatUiHousekeeping({
    mode: config.answers.chatUiTasks,
    logger,
    onTask: (task, handled) => metrics.chatUiTasks.inc({ ui: task.ui, kind: task.kind, handled }),
  });
  const parameters = {
    lenient: config.answers.lenientParameters,
    logger,
    onIgnored: (param: string) => metrics.ignoredParameters.inc({ param }),
  };
  const { threads, stored, background, conversations } = continuity;
  const { documentLinks } = dependencies;
  const mcp = config.mcp.enabled ? mcpRoutes({ ...dependencies, ...answering }) : undefined;
  return [
    chatCompletionsRoute({
      ...answering,
      config,
      documentPage: dependencies.documentPage,
      documentLinks,
      threads,
      housekeeping,
      parameters,
    }),
    ...responsesRoutes({
      ...answering,
      config,
      threads,
      stored,
      background,
      conversations,
      housekeeping,
      parameters,
      tokens: dependencies.tokens,
      documentPage: dependencies.documentPage,
      documentLinks,
    }),
    ...conversationsRoutes({ config, authenticate: dependencies.authenticate, conversations }),
    ...(mcp?.routes ?? []),
    ...(mcp && config.oauth && dependencies.oauth ? oauthRoutesOf(dependencies, mcp, config.oauth, dependencies.oauth) : []),
    ...modelsRoutes({
      created: dependencies.startedAt,
      authenticate: dependencies.authenticate,
      client: dependencies.client,
      clock: dependencies.clock,
      cacheSeconds: config.upstream.modelsCacheSeconds,
    }),
    ...healthRoutes({ client: dependencies.client, lifecycle: dependencies.lifecycle }),
    ...(dependencies.usage ? usageRoutes({ ...dependencies.usage, clock: dependencies.clock }) : []),
    ...(dependencies.documents
      ? documentRoutes(dependencies.documents, documentLinks && { links: documentLinks, authenticate: dependencies.authenticate })
      : []),
    ...(config.server.playground
      ? playgroundRoutes({
          embedded: dependencies.documents !== undefined,
          defaultWorkspace: config.upstream.defaultWorkspace ?? null,
          // Any key works against the embedded workspace, until keys are listed: then the user types theirs.
          key: dependencies.documents !== undefined && !config.auth.listing ? "any-key-works-locally" : null,
          mcp: config.mcp.enabled,
        })
      : []),
    ...metricsRoutes({ metrics, settings: config.metrics }),
    {
      method: "GET",
      path: "/openapi.json",
      handler: {
        express: (_request, response) => {
          response.json(openApiDocument({ version: dependencies.version, ...config.limits, paths: table().openApiPaths() }));
        },
      },
      operation: { summary: "This adapter's OpenAPI 3.1 document", responses: { "200": { description: "The document" } } },
    },
  ];
}

/**
 * Builds the adapter's request listener. It never listens: the entry point owns the port. Every
 * request is observed (request id, log line, metrics, and its span when tracing), checked by the
 * edge's guard (its `Host` and browser `Origin`: `edge-guard.ts`), answered for CORS, admitted by the
 * lifecycle, and matched once against the route table: hot routes go to their plain `node:http`
 * handler, the others to an Express app built from the same table; a known path asked with
 * another method is a 405 with `Allow`, an unknown one a 404.
 */
export function createApp(dependencies: AppDependencies): RequestListener {
  const { lifecycle, facts } = dependencies;
  const handleCors = corsHandler(dependencies.config.server.corsOrigins);
  const guard = edgeGuard(dependencies.config.server);
  const table: RouteTable = new RouteTable(routesOf(dependencies, () => table));
  const expressApp = express();
  expressApp.disable("x-powered-by");
  expressApp.set("etag", false);
  expressApp.set("query parser", "simple");
  for (const route of table.routes) {
    if (!("express" in route.handler)) continue;
    const path = RouteTable.expressPath(route.path);
    if (route.method === "GET") expressApp.get(path, route.handler.express);
    else if (route.method === "POST") expressApp.post(path, route.handler.express);
    else expressApp.delete(path, route.handler.express);
  }
  expressApp.use(errorMiddleware(dependencies.logger, facts));

  const dispatch = (request: IncomingMessage, response: ServerResponse, context: RequestContext) => {
    const path = pathOf(request.url);
    // The host and the browser origin first: a rebinding page gets nothing, not even a preflight.
    const refused = guard(request, path);
    if (refused) {
      sendError(response, refused);
      return;
    }
    if (handleCors(request, response)) return;
    if (!lifecycle.accepting(path, response)) return;
    const match = table.match(request.method, path);
    if (match.kind === "none") {
      sendError(response, new NotFoundError(`No route for ${request.method} ${path}`));
      return;
    }
    if (match.kind === "method-not-allowed") {
      sendError(response, new MethodNotAllowedError(request.method ?? "", path, match.allowed));
      return;
    }
    context.matched(match.label);
    const { handler } = match.route;
    if ("fast" in handler) handler.fast(request, response, match.params);
    else expressApp(request, response);
  };
  return (request: IncomingMessage, response: ServerResponse) => {
    const context = facts.open(request, response);
    // Traced, the request's log lines carry its trace and span ids (docs/observability.md).
    facts.handle(context, request, response, dispatch);
  };
}
