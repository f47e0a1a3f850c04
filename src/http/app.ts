import { type IncomingMessage, type RequestListener, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import type { AnswerService } from "../answer/answer-service.js";
import type { Authenticator } from "../auth/authenticate.js";
import type { DocumentLinkSigner } from "../auth/document-links.js";
import type { Config, OAuthSettings } from "../config/config.js";
import type { Continuity } from "../continuity/continuity.js";
import type { StoredValue } from "../dialects/responses/stored-value.js";
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
import { inProcessSchemas, type SchemaService } from "../structured/schema-service.js";
import { ChatUiHousekeeping } from "./chat-ui-housekeeping.js";
import { corsHandler } from "./cors.js";
import { edgeGuard } from "./edge-guard.js";
import { reportFailure, sendJson } from "./error-response.js";
import type { Lifecycle } from "./lifecycle.js";
import { openApiDocument } from "./openapi.js";
import { type RequestContext } from "./request-context.js";
import { pathOf, type RequestContexts } from "./request-contexts.js";
import { Call, type Route, route, RouteTable } from "./route-table.js";
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
  /** Where the caller's schemas are checked and answers validated (the schema worker); on the calling thread when not given. */
  schemas?: SchemaService;
  authenticate: Authenticator;
  /** The usage ledger the runner charges each answer to, and the usage endpoint's guard, when usage is counted (docs/governance.md#usage). */
  usage?: Omit<UsageRouteOptions, "clock"> | undefined;
  /** What carries answers from one request to the next: thread memory, stored and background responses, conversations. */
  continuity: Continuity<StoredValue>;
  clock: Clock;
  /** The ids the adapter makes (random unless a test fixes them). */
  ids?: Ids;
  limit: ConcurrencyLimit;
  /** Limits per client key and workspace (`RATE_LIMIT_*`); undefined when none is configured. */
  rateLimits?: RateLimits | undefined;
  lifecycle: Lifecycle;
  /** Makes each request's context (request-contexts.ts). */
  contexts: RequestContexts;
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
  return oauthRoutes({ edge, mcp: behindOAuth });
}

/**
 * What every answer route is built from: the adapter's one answer runner (and one `Ids`), and the
 * edge's parts (docs/architecture.md#one-runner-one-admission).
 */
function answeringOf(dependencies: AppDependencies): AnswerRouteOptions {
  const { config, logger, lifecycle, continuity } = dependencies;
  const ids = dependencies.ids ?? randomIds;
  // The caller's schemas, checked once and kept by hash: by the routes (a 400), the runner (validating answers).
  const { schemaMaxBytes: maxBytes, schemaMaxDepth: maxDepth } = config.answers.structured;
  const schemas = dependencies.schemas ?? inProcessSchemas({ maxBytes, maxDepth });
  const runner = new AnswerRunner({
    answers: dependencies.answers,
    schemas,
    tokens: dependencies.tokens,
    background: continuity.background,
    lifecycle,
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
  return { runner, schemas, authenticate, limit, rateLimits, sweeps, clock, ids, logger };
}

/** Every route of the adapter, in one list (docs/architecture.md#modules). */
function routesOf(
  dependencies: AppDependencies,
  table: () => RouteTable,
  upgrading: (request: IncomingMessage) => boolean,
): Route[] {
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
      contexts: dependencies.contexts,
      lifecycle: dependencies.lifecycle,
      upgrading,
    }),
    ...conversationsRoutes({ config, authenticate: dependencies.authenticate, conversations, ids: answering.ids }),
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
    route(
      "GET",
      "/openapi.json",
      ({ response }) => {
        const { version } = dependencies;
        sendJson(response, openApiDocument({ version, ...config.limits, paths: table().openApiPaths() }));
      },
      { summary: "This adapter's OpenAPI 3.1 document", responses: { "200": { description: "The document" } } },
    ),
  ];
}

/**
 * Builds the adapter's request listener. It never listens: the entry point owns the port. Every
 * request is observed (its context: request id, log line, metrics, and its span when tracing),
 * checked by the edge's guard (its `Host` and browser `Origin`: `edge-guard.ts`), answered for
 * CORS, admitted by the lifecycle, and matched once against the route table, the one dispatcher:
 * a known path asked with another method is a 405 with `Allow`, an unknown one a 404, and a route's
 * handler gets its call (request, response, context, typed path parameters, query). Whatever a
 * handler throws goes the one error path (`reportFailure`).
 */
export function createApp(dependencies: AppDependencies): AppListeners {
  const { lifecycle, contexts, logger } = dependencies;
  const handleCors = corsHandler(dependencies.config.server.corsOrigins);
  const guard = edgeGuard(dependencies.config.server);
  // The requests that came as upgrades: their sockets are no HTTP parser's, and their route may take them.
  const upgrades = new WeakSet<IncomingMessage>();
  const table: RouteTable = new RouteTable(routesOf(dependencies, () => table, (request) => upgrades.has(request)));

  const dispatch = (request: IncomingMessage, response: ServerResponse, context: RequestContext) => {
    const path = pathOf(request.url);
    // The host and the browser origin first: a rebinding page gets nothing, not even a preflight.
    const refused = guard(request, path);
    if (refused) {
      reportFailure(refused, { response, context }, logger);
      return;
    }
    if (handleCors(request, response)) return;
    if (!lifecycle.accepting(path, response, context)) return;
    const match = table.match(request.method, path);
    if (match.kind !== "route") {
      const unrouted = match.kind === "none" ? new NotFoundError(`No route for ${request.method} ${path}`) : new MethodNotAllowedError(request.method ?? "", path, match.allowed);
      reportFailure(unrouted, { response, context }, logger);
      return;
    }
    context.matched(match.label);
    serve(match.route, new Call(request, response, context, match.params));
  };
  /** Runs a route's handler; what it throws, at once or later, is the error response. */
  const serve = (route: Route, call: Call) => {
    let served: Promise<void> | void;
    try {
      served = route.handle(call);
    } catch (error) {
      reportFailure(error, call, logger);
      return;
    }
    served?.catch((error: unknown) => reportFailure(error, call, logger));
  };
  const listener = (request: IncomingMessage, response: ServerResponse) => {
    const context = contexts.open(request, response);
    // Traced, the request's log lines carry its trace and span ids (docs/observability.md).
    contexts.handle(context, request, response, dispatch);
  };
  /**
   * A request asking to upgrade its connection (a Responses WebSocket: docs/responses-api.md#websocket-mode)
   * takes the same path as any request, with a response written on its socket: the guard, the
   * lifecycle and the route table refuse it as HTTP (then the socket closes), and its route upgrades it.
   */
  const upgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Until the route takes it, a socket error ends the socket (the response's close ends the request).
    socket.on("error", () => socket.destroy());
    if (head.length > 0) socket.unshift(head);
    const response = new ServerResponse(request);
    response.shouldKeepAlive = false;
    response.assignSocket(socket as Socket);
    response.once("finish", () => socket.end());
    upgrades.add(request);
    listener(request, response);
  };
  return { listener, upgrade };
}

/** The adapter's listeners: its requests', and its upgrade requests' (`server.on("upgrade", …)`). */
export interface AppListeners {
  listener: RequestListener;
  upgrade: (request: IncomingMessage, socket: Duplex, head: Buffer) => void;
}
