import type { IncomingMessage } from "node:http";
import type { TokenUsage } from "../answer/answer-events.js";
import type { Authenticator, Identity } from "../auth/authenticate.js";
import type { Config } from "../config/config.js";
import { isId } from "../core/ids.js";
import { RequestValidationError } from "../errors/adapter-error.js";
import type { ConcurrencyLimit } from "../limits/concurrency-limit.js";
import type { ExpectedCost, HeldReservation, RateLimits, WorkspaceLimits } from "../limits/rate-limits.js";
import { NOT_METERED, type UsageMeter } from "./delivery/delivery.js";
import { resolveWorkspace } from "./resolve-workspace.js";
import type { RequestContext } from "./request-context.js";

/** What admission is built from: the per-process caps and the key's rate limits. */
export interface AdmissionOptions {
  limit: ConcurrencyLimit;
  /** Limits per client key and workspace (`RATE_LIMIT_*`); undefined when none is configured. */
  rateLimits?: RateLimits | undefined;
}

/**
 * A request admitted (docs/rate-limits.md): the meter of its answer's tokens, the `x-ratelimit-*`
 * headers (for its client: an HTTP route sets them on the response), and the release of everything
 * it holds: one release, run once — when the request ends or, under a rate limit, as its response's
 * last bytes are written, unless an answer that outlives the request took it over (`handOver`).
 */
export interface Admitted {
  readonly meter: UsageMeter;
  readonly headers: Readonly<Record<string, string>>;
  /** The answer's reservation in its key's quotas, for a background answer's record (a replica that takes it over settles it); undefined without a quota. */
  readonly reservation: HeldReservation | undefined;
  release(): void;
  /**
   * Takes the release over from the request (a background answer, which holds its place under the
   * caps and its key's slot while it runs, not while the request that started it does): the
   * request's end no longer gives the admission back, the returned release must. A request that
   * had already ended gave it back then: the release returned does nothing more.
   */
  handOver(): () => void;
}

/** Who asks, where, and whether it asks the workspace (`admit`). */
export interface AdmissionRequest {
  /** Whose limits count it: the credential's hash, a named key's, a gateway identity's (`Identity.principal`). */
  principal: string;
  /** Who asks as usage, the log line and the audit trail name it (`Account.id`: never a key; docs/governance.md#who-asks). */
  account: string;
  workspace: string;
  /** False for a request that asks the workspace nothing (a chat UI's housekeeping, an MCP call that asks nothing, a takeover): the caps only. */
  asksWorkspace: boolean;
  /** What its answer is expected to cost: reserved under a token limit (docs/rate-limits.md#reservations). */
  cost?: ExpectedCost | undefined;
}

/**
 * The one admission step of every answer route and MCP (docs/rate-limits.md): may this client key
 * ask in this workspace now? Takes a place under the per-process caps (over them: a 429 at once)
 * and, when the request asks the workspace and `RATE_LIMIT_*` applies there, counts it against the
 * key's limits (shared through Redis with `REDIS_URL`): over a limit it rejects with a
 * `RateLimitError` (429 with `retry-after`), before any upstream call; under a token limit its
 * expected cost is reserved. What it takes is given back once, when the request ends (or later, by
 * an answer it was handed over to); a reservation is given back then only when the workspace was
 * never asked (the runner settles it otherwise). It needs no HTTP response: the request's context
 * says when it ends.
 */
export async function admit(context: RequestContext, request: AdmissionRequest, options: AdmissionOptions): Promise<Admitted> {
  const { principal, workspace } = request;
  const releaseCaps = options.limit.acquire(workspace);
  // Who asks is settled here, once (docs/governance.md#who-asks): every subscriber of the request's end reads it.
  context.identified(request.account);
  let releaseLimits: (() => void) | undefined;
  let released = false;
  let handedOver = false;
  const release = () => {
    if (released) return;
    released = true;
    releaseCaps();
    releaseLimits?.();
  };
  const releaseWithRequest = () => {
    if (!handedOver) release();
  };
  const handOver = () => {
    handedOver = true;
    return release;
  };
  context.whenClosed(releaseWithRequest);
  const limits = request.asksWorkspace ? options.rateLimits?.limitsOf(workspace) : undefined;
  if (!limits || !options.rateLimits) return { meter: NOT_METERED, headers: {}, reservation: undefined, release, handOver };
  // Under a rate limit, freed as the last bytes are written, not a turn later at 'close': a client
  // that sends its next request at once (to any replica) finds its slot free.
  context.whenFinishing(releaseWithRequest);
  const admitted = await admitUnderLimits({ principal, workspace, cost: request.cost }, limits, options.rateLimits, (held) => {
    if (released) held();
    else releaseLimits = held;
  });
  return { ...admitted, release, handOver };
}

/** The key's limits in the workspace (a refusal rejects, as the 429), the headers that tell them, and the meter of its reservation. */
async function admitUnderLimits(
  request: Pick<AdmissionRequest, "principal" | "workspace" | "cost">,
  limits: WorkspaceLimits,
  rateLimits: RateLimits,
  hold: (release: () => void) => void,
): Promise<Omit<Admitted, "release" | "handOver">> {
  const admission = await rateLimits.take(request.principal, request.workspace, limits, request.cost);
  let asked = false;
  hold(() => {
    admission.release();
    // Nothing was asked of the workspace (refused later at the edge, or failed before its queries existed): the reservation goes back.
    if (!asked) admission.settle(0);
  });
  const { headers, held: reservation } = admission;
  if (!admission.countsTokens) return { meter: NOT_METERED, headers, reservation };
  const meter: UsageMeter = {
    countsTokens: true,
    charge: (usage: TokenUsage) => admission.settle(usage.promptTokens + usage.completionTokens),
    asked: () => {
      asked = true;
    },
  };
  return { meter, headers, reservation };
}

/** A tool request (MCP) identified at the edge: who asks, in which workspace. */
export interface IdentifiedToolRequest {
  identity: Identity;
  workspace: string;
}

/**
 * Who asks the MCP endpoint, and where (docs/architecture.md#mcp-tools): authenticate, then the
 * workspace (the `Service-Workspace` header, else the path's `/mcp/{workspace}`, else the default).
 * A browser origin the deployment does not allow was refused before, by the edge's guard
 * (`edge-guard.ts`: the MCP transport's guard against DNS rebinding). The body is read after,
 * since its problems are JSON-RPC errors; `admit` follows.
 */
export function identifyToolRequest(
  request: IncomingMessage,
  pathWorkspace: string | undefined,
  options: { authenticate: Authenticator; config: Pick<Config, "upstream"> },
): IdentifiedToolRequest {
  const identity = options.authenticate(request);
  if (pathWorkspace !== undefined && !isId(pathWorkspace)) {
    throw new RequestValidationError([
      { loc: ["path", "workspace"], msg: "String should match the id pattern (letters, digits and ._:-, at most 128)", type: "string_pattern_mismatch", input: pathWorkspace },
    ]);
  }
  const resolved = resolveWorkspace(request, pathWorkspace, options.config.upstream.defaultWorkspace);
  if ("issue" in resolved) {
    throw new RequestValidationError([{ ...resolved.issue, msg: resolved.issue.type === "missing" ? "Field required: send a Service-Workspace header, or use /mcp/<workspace>" : resolved.issue.msg }]);
  }
  return { identity, workspace: resolved.workspace };
}
