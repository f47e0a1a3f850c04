import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/**
 * The adapter's Prometheus metrics, in a registry of its own (so that several adapters in one
 * process, as in tests, do not collide). What an operator needs to see: traffic and latency by
 * route, mode and status; upstream calls and errors; how queries end; open streams; that
 * polling is shared (list calls against waiting queries); and how realtime channels fare.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: "adapter_http_requests_total",
    help: "HTTP requests answered, by route, mode and status",
    labelNames: ["route", "mode", "status"] as const,
    registers: [this.registry],
  });
  readonly requestSeconds = new Histogram({
    name: "adapter_http_request_duration_seconds",
    help: "Time from request to the end of the response (streams included), by route, mode and status",
    labelNames: ["route", "mode", "status"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly upstreamCalls = new Counter({
    name: "adapter_upstream_requests_total",
    help: "Calls to the workspace service, by endpoint and outcome (HTTP status, or error)",
    labelNames: ["endpoint", "outcome"] as const,
    registers: [this.registry],
  });
  readonly upstreamSeconds = new Histogram({
    name: "adapter_upstream_request_duration_seconds",
    help: "Latency of calls to the workspace service, by endpoint",
    labelNames: ["endpoint"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly queries = new Counter({
    name: "adapter_queries_finished_total",
    help: "Workspace queries followed to an end, by how they ended (PROCESSED, FAILED, timeout, cancelled)",
    labelNames: ["mode", "state"] as const,
    registers: [this.registry],
  });
  readonly listCalls = new Counter({
    name: "adapter_watcher_list_calls_total",
    help: "GET /queries calls made by the shared pollers (pages included)",
    registers: [this.registry],
  });
  readonly realtimePublications = new Counter({
    name: "adapter_realtime_publications_total",
    help: "Publications received on queries' realtime channels",
    registers: [this.registry],
  });
  readonly realtimeFallbacks = new Counter({
    name: "adapter_realtime_fallbacks_total",
    help: "Queries whose realtime channel was not followed or was given up (polled alone), by reason",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });
  readonly leaseChanges = new Counter({
    name: "adapter_cluster_lease_changes_total",
    help: "Polling leases this replica acquired, lost or released (shared polling with Redis)",
    labelNames: ["change"] as const,
    registers: [this.registry],
  });
  readonly snapshotsPublished = new Counter({
    name: "adapter_cluster_snapshots_published_total",
    help: "Query snapshots this replica shared with the others as a lease holder",
    registers: [this.registry],
  });
  readonly snapshotsReceived = new Counter({
    name: "adapter_cluster_snapshots_received_total",
    help: "Query snapshots this replica received from a lease holder",
    registers: [this.registry],
  });
  readonly clusterFallbacks = new Counter({
    name: "adapter_cluster_fallbacks_total",
    help: "Polls this replica made alone, by reason (redis: Redis failed or is known down; slow_redis: its answer did not come at once; silent_holder: the lease holder was silent)",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });
  readonly oauthCeilings = new Counter({
    name: "adapter_oauth_ceiling_passed_total",
    help: "OAuth attempts counted past a ceiling for everyone together (registrations, authorizations, wrong keys): an alarm, nobody is refused for it (docs/mcp-oauth.md#limits)",
    labelNames: ["kind"] as const,
    registers: [this.registry],
  });
  readonly storeWrites = new Counter({
    name: "adapter_store_writes_total",
    help: "Conversation turns, stored responses and query owners written for an answer, by store and outcome (stored, retried: stored after a retry, lost)",
    labelNames: ["store", "outcome"] as const,
    registers: [this.registry],
  });
  readonly continuationsRefused = new Counter({
    name: "adapter_continuations_refused_total",
    help: "Requests refused (503) because the conversation, response or query owner they need could not be looked up (Redis did not answer), by store",
    labelNames: ["store"] as const,
    registers: [this.registry],
  });
  readonly redisCommandSeconds = new Histogram({
    name: "adapter_redis_command_duration_seconds",
    help: "Time Redis took to answer the adapter's commands (a batch counts once), by outcome (answered; error: an error reply such as CROSSSLOT; failed: timed out or connection lost); compare with REDIS_COMMAND_TIMEOUT_MS",
    labelNames: ["outcome"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly redisAvailabilityChanges = new Counter({
    name: "adapter_redis_availability_changes_total",
    help: "Times Redis was found unreachable (down) or answering again (up)",
    labelNames: ["state"] as const,
    registers: [this.registry],
  });
  readonly redisAvailable: Gauge;
  readonly rateLimited = new Counter({
    name: "adapter_rate_limited_total",
    help: "Answer requests refused with a 429 by a rate limit (RATE_LIMIT_*), by limit (rpm, tpm, concurrent) and workspace",
    labelNames: ["limit", "workspace"] as const,
    registers: [this.registry],
  });
  readonly rateLimitFallbacks = new Counter({
    name: "adapter_rate_limit_fallbacks_total",
    help: "Rate-limit counts this replica made on its own because Redis did not answer, by reason (unavailable: not sent, its node known down; no_answer: none within the bound, or the connection lost; error: an error reply)",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });
  readonly chatUiTasks = new Counter({
    name: "adapter_chat_ui_tasks_total",
    help: "Chat UIs' housekeeping requests recognised (docs/chat-ui-tasks.md), by UI, kind and who handled them (local: answered by the adapter; workspace: passed on, with CHAT_UI_TASKS=workspace or a forced tool call)",
    labelNames: ["ui", "kind", "handled"] as const,
    registers: [this.registry],
  });
  readonly ignoredParameters = new Counter({
    name: "adapter_ignored_parameters_total",
    help: "Parameters asking for what the workspace cannot do, ignored with LENIENT_PARAMETERS=on (refused otherwise), by parameter",
    labelNames: ["param"] as const,
    registers: [this.registry],
  });
  readonly tokens = new Counter({
    name: "adapter_tokens_total",
    help: "Tokens of the answers charged (USAGE_COUNTING), by key (a named key's or gateway's name, oauth, or other for every key without a name), workspace, mode and kind (input, output, reasoning: a part of output)",
    labelNames: ["key", "workspace", "mode", "kind"] as const,
    registers: [this.registry],
  });
  readonly answers = new Counter({
    name: "adapter_answers_total",
    help: "Answers charged (delivered, their usage counted; USAGE_COUNTING), by key, workspace and mode",
    labelNames: ["key", "workspace", "mode"] as const,
    registers: [this.registry],
  });
  readonly usageWrites = new Counter({
    name: "adapter_usage_writes_total",
    help: "Answers' usage written to the usage store, by outcome (stored, retried: stored after a retry, lost)",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });
  readonly auditRecords = new Counter({
    name: "adapter_audit_records_total",
    help: "Audit records (AUDIT_LOG), by outcome (written; dropped: the sink could not take it)",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });
  readonly leasesHeld: Gauge;
  readonly slotsInUse: Gauge;
  readonly limitsShared: Gauge;
  /** Workspaces that have a label in `adapter_rate_limited_total`; the others count as `other`. */
  private readonly limitedWorkspaces = new Set<string>();
  /** Workspaces that have a label in the usage counters; the others count as `other`. */
  private readonly usageWorkspaces = new Set<string>();
  readonly openStreams: Gauge;
  readonly backgroundAnswers: Gauge;
  readonly waitingQueries: Gauge;
  readonly pollers: Gauge;
  readonly realtimeConnections: Gauge;
  readonly realtimeSubscriptions: Gauge;
  readonly spansDropped: Counter;

  /** `sources` are read at scrape time: the gauges describe state owned elsewhere. */
  constructor(sources: MetricSources, options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    const droppedSpans = sources.droppedSpans;
    this.spansDropped = new Counter({
      name: "adapter_trace_spans_dropped_total",
      help: "Spans tracing lost, by reason (queue_full: the exporter could not keep up and OTEL_BSP_MAX_QUEUE_SIZE spans were waiting; export_failed: the collector failed or refused them)",
      labelNames: ["reason"] as const,
      registers: [this.registry],
      collect() {
        // Counted by tracing itself: the counter shows its totals (none with tracing off).
        const dropped = droppedSpans?.();
        if (!dropped) return;
        this.reset();
        for (const [reason, count] of Object.entries(dropped)) this.inc({ reason }, count);
      },
    });
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.set(read());
        },
      });
    this.openStreams = gauge("adapter_open_streams", "Streamed responses open now", sources.openStreams);
    this.backgroundAnswers = gauge("adapter_background_answers", "Background responses this replica runs now (docs/responses-api.md#background-mode)", sources.backgroundAnswers ?? (() => 0));
    this.leasesHeld = gauge(
      "adapter_cluster_leases_held",
      "Workspaces whose polling this replica leads for the cluster (shared polling with Redis)",
      sources.leasesHeld ?? (() => 0),
    );
    this.redisAvailable = gauge(
      "adapter_redis_available",
      "Whether Redis is connected and answering (1), or its commands are skipped (0; also 0 with no Redis configured)",
      sources.redisAvailable ?? (() => 0),
    );
    this.slotsInUse = gauge(
      "adapter_rate_limit_slots_in_use",
      "Concurrency slots (RATE_LIMIT_CONCURRENT) this replica holds for answers in flight",
      sources.slotsInUse ?? (() => 0),
    );
    this.limitsShared = gauge(
      "adapter_rate_limit_shared",
      "1 while this replica's rate limits are counted in Redis, shared with the other replicas; 0 while counted in process",
      sources.limitsShared ?? (() => 0),
    );
    this.waitingQueries = gauge(
      "adapter_watcher_waiting_queries",
      "Queries the shared pollers are waiting for, over all workspaces",
      sources.waitingQueries,
    );
    this.pollers = gauge(
      "adapter_watcher_pollers",
      "Shared pollers running (one per credential and workspace with waiting queries)",
      sources.pollers,
    );
    this.realtimeConnections = gauge(
      "adapter_realtime_connections",
      "Realtime (Centrifugo) connections open or opening, one per endpoint and connection token in use",
      sources.realtimeConnections ?? (() => 0),
    );
    this.realtimeSubscriptions = gauge(
      "adapter_realtime_subscriptions",
      "Realtime channel subscriptions held (one per followed query)",
      sources.realtimeSubscriptions ?? (() => 0),
    );
  }

  /**
   * Counts a request refused by a rate limit. Workspace ids come from clients, so only the first
   * `MAX_WORKSPACE_LABELS` get a label of their own; later ones count as `other`.
   */
  limited(limit: string, workspace: string): void {
    this.rateLimited.inc({ limit, workspace: workspaceLabel(this.limitedWorkspaces, workspace) });
  }

  /**
   * Counts an answer charged (docs/governance.md#metrics) under its key's label: named keys and
   * gateways have their own, every key without a name shares `other`; workspaces as `limited` does.
   */
  charged(key: string, workspace: string, mode: string, usage: Record<"inputTokens" | "outputTokens" | "reasoningTokens", number>): void {
    const labels = { key, workspace: workspaceLabel(this.usageWorkspaces, workspace), mode };
    this.answers.inc(labels);
    this.tokens.inc({ ...labels, kind: "input" }, usage.inputTokens);
    this.tokens.inc({ ...labels, kind: "output" }, usage.outputTokens);
    this.tokens.inc({ ...labels, kind: "reasoning" }, usage.reasoningTokens);
  }
}

/** Workspace labels of a counter before the rest count as `other`. */
const MAX_WORKSPACE_LABELS = 200;

/** A workspace's label: its own among the first `MAX_WORKSPACE_LABELS` of `labelled` (workspace ids come from clients), `other` after. */
function workspaceLabel(labelled: Set<string>, workspace: string): string {
  if (labelled.size < MAX_WORKSPACE_LABELS) labelled.add(workspace);
  return labelled.has(workspace) ? workspace : "other";
}

/** Where the state gauges read from. */
export interface MetricSources {
  openStreams: () => number;
  /** Background answers this replica runs now. */
  backgroundAnswers?: () => number;
  waitingQueries: () => number;
  pollers: () => number;
  realtimeConnections?: () => number;
  realtimeSubscriptions?: () => number;
  leasesHeld?: () => number;
  redisAvailable?: () => number;
  slotsInUse?: () => number;
  limitsShared?: () => number;
  /** Spans tracing lost so far, by reason (none with tracing off). */
  droppedSpans?: () => Readonly<Record<string, number>> | undefined;
}
