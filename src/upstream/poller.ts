import type { AdapterError } from "../errors/adapter-error.js";
import type { AnswerTrace } from "../telemetry/answer-trace.js";
import { type PollRound, type PollTracer, pollTracer } from "../telemetry/poll-spans.js";
import { NOOP_TRACING, type Tracing } from "../telemetry/tracing.js";
import type { Clock } from "../util/clock.js";
import { followPages, type PageRequest } from "./follow-pages.js";
import type { Waiter } from "./mailbox.js";
import { nextPollDelay } from "./poll-pace.js";
import type { PollSharing, SharedGroup } from "./poll-sharing.js";
import type { UpstreamQuery } from "./query-schemas.js";
import { toQuerySnapshot } from "./to-query-snapshot.js";
import type { Caller, WorkspaceClient } from "./workspace-client.js";

/** What a workspace's poller needs (the shared part of the watcher's settings). */
export interface PollerOptions {
  client: WorkspaceClient;
  clock: Clock;
  pollIntervalMinMs: number;
  pollIntervalMaxMs: number;
  /** Pages of `GET /queries` followed per poll to find waiting queries not on the first page. */
  maxListPages: number;
  /** Consecutive failed polls after which the waiters are told (transient faults are retried). */
  maxConsecutiveFailures?: number;
  onPoll?: (event: { workspace: string; pages: number; waiting: number }) => void;
  onPollError?: (error: unknown) => void;
  /** Shares each workspace's polling with other replicas (with Redis); without it, each replica polls alone. */
  sharing?: PollSharing;
  /** Traces each poll as a short trace of its own, linked to the answers it serves (docs/observability.md); `NOOP_TRACING` without. */
  tracing?: Tracing;
}

/** The poller of one (credential, workspace): one list call per interval for all its waiters. */
export class WorkspacePoller {
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly tracer: PollTracer;
  private timer: unknown = null;
  private dueAt = Number.POSITIVE_INFINITY;
  private inFlight: AbortController | null = null;
  private failures = 0;
  /** A poll was asked for while one was in flight: poll again as soon as it ends. */
  private again = false;
  /** This workspace's polling shared with other replicas, when there are any. */
  private readonly shared: SharedGroup | null;

  constructor(
    private readonly options: PollerOptions,
    private readonly caller: Caller,
    /** The caller's credential hash (no raw credential is kept as a key). */
    credentialKey: string,
    private readonly onIdle: () => void,
  ) {
    this.tracer = pollTracer(options.tracing ?? NOOP_TRACING);
    const group = `${credentialKey}:${caller.workspace}`;
    this.shared = options.sharing?.join(group, (items, trace) => this.deliverShared(items, trace), () => this.pollSoon()) ?? null;
  }

  get waitingCount(): number {
    return this.waiters.size;
  }

  add(waiter: Waiter): void {
    let set = this.waiters.get(waiter.id);
    if (!set) {
      set = new Set();
      this.waiters.set(waiter.id, set);
    }
    set.add(waiter);
    // A new query is polled soon, however slow the interval has grown for older ones.
    this.schedule(this.options.pollIntervalMinMs);
  }

  remove(waiter: Waiter): void {
    const set = this.waiters.get(waiter.id);
    set?.delete(waiter);
    if (set?.size === 0) {
      this.waiters.delete(waiter.id);
      this.shared?.forget(waiter.id);
    }
    if (this.waiters.size === 0) this.stop();
  }

  /** Polls now, or right after the poll in flight (a channel showed a query's end). */
  pollSoon(): void {
    if (this.inFlight) this.again = true;
    else if (this.waiters.size > 0) this.schedule(0);
  }

  /** Brings the next poll forward if the waiters' pace now asks for it sooner. */
  repace(): void {
    if (this.waiters.size > 0) this.schedule(this.nextDelay());
  }

  private stop(): void {
    if (this.timer !== null) this.options.clock.clearTimeout(this.timer);
    this.timer = null;
    this.dueAt = Number.POSITIVE_INFINITY;
    this.inFlight?.abort();
    this.inFlight = null;
    this.shared?.leave();
    this.onIdle();
  }

  /** Hands list items (from a poll, or shared by the replica that polled) to the waiters they are for. */
  private deliverAll(items: readonly UpstreamQuery[]): void {
    for (const item of items) {
      const set = this.waiters.get(item.id);
      if (!set) continue;
      const snapshot = toQuerySnapshot(item);
      for (const waiter of set) waiter.deliver(snapshot);
    }
  }

  /** What another replica's poll found (the lease holder's); traced in that poll's trace when it sent one. */
  private deliverShared(items: readonly UpstreamQuery[], pollTraceparent: string | undefined): void {
    this.deliverAll(items);
    const waiters = this.waiters;
    function* fed(): Generator<AnswerTrace> {
      for (const item of items) for (const waiter of waiters.get(item.id) ?? []) yield waiter.trace;
    }
    this.tracer.receivedShared(pollTraceparent, this.caller.workspace, fed, items.length);
  }

  /** Polls in `delay` ms unless a poll is already due sooner or running. */
  private schedule(delay: number): void {
    if (this.inFlight) return;
    const dueAt = this.options.clock.now() + delay;
    if (this.timer !== null && this.dueAt <= dueAt) return;
    if (this.timer !== null) this.options.clock.clearTimeout(this.timer);
    this.dueAt = dueAt;
    const fire = () => {
      this.timer = null;
      this.dueAt = Number.POSITIVE_INFINITY;
      void this.poll();
    };
    // A poll is no request's work: its timer must not carry the log span of the request that set it.
    const { clock } = this.options;
    this.timer = this.tracer.detached(() => clock.setTimeout(fire, delay));
  }

  /** The delay before the next poll, as the waiters' ages and paces and the recent failures ask (poll-pace.ts). */
  private nextDelay(): number {
    const { pollIntervalMinMs: minMs, pollIntervalMaxMs: maxMs, clock } = this.options;
    return nextPollDelay({ minMs, maxMs }, clock.now(), this.failures, this.allWaiters());
  }

  private *allWaiters(): Generator<Waiter> {
    for (const set of this.waiters.values()) yield* set;
  }

  private async poll(): Promise<void> {
    const controller = new AbortController();
    this.inFlight = controller;
    // With other replicas, only the lease holder lists; it looks for their queries too.
    const turn = this.shared ? await this.shared.turn([...this.waiters.keys()]) : { poll: true, othersWaitFor: [] };
    if (!turn.poll || controller.signal.aborted) {
      if (this.inFlight === controller) this.inFlight = null;
      if (this.waiters.size > 0 && !controller.signal.aborted) this.schedule(this.again ? 0 : this.nextDelay());
      this.again = false;
      return;
    }
    const round = this.tracer.startRound(this.caller.workspace, () => this.waitingTraces(), turn.othersWaitFor.length);
    const goesOn = await round.run(() => this.listRound(controller, turn.othersWaitFor, round));
    if (!goesOn) return;
    const again = this.again;
    this.again = false;
    if (this.waiters.size > 0) this.schedule(again ? 0 : this.nextDelay());
  }

  /**
   * One round of list calls (traced as `round`): pages until every waited-for id
   * is found, the findings delivered and shared. Returns whether polling goes on (not after an
   * abort, nor after a failure that was handed to the waiters).
   */
  private async listRound(controller: AbortController, othersWaitFor: readonly string[], round: PollRound): Promise<boolean> {
    const missing = new Set([...this.waiters.keys(), ...othersWaitFor]);
    const found: UpstreamQuery[] = [];
    let pages = 0;
    let failure: unknown;
    try {
      const { client } = this.options;
      const list = (request: PageRequest) => client.listQueries(this.caller, request, controller.signal);
      // Later pages are read only while some waited-for query is still missing.
      for await (const page of followPages(list, this.options.maxListPages)) {
        pages += 1;
        for (const item of page.items) if (missing.delete(item.id)) found.push(item);
        if (missing.size === 0) break;
      }
      this.failures = 0;
      this.deliverAll(found);
      this.shared?.share(found, round.traceparent);
    } catch (error) {
      if (controller.signal.aborted) return false;
      failure = error;
      this.failures += 1;
      this.options.onPollError?.(error);
      if (isPermanent(error) || this.failures >= (this.options.maxConsecutiveFailures ?? 5)) {
        for (const set of this.waiters.values()) for (const waiter of set) waiter.fail(error);
        return false;
      }
    } finally {
      if (this.inFlight === controller) this.inFlight = null;
      this.options.onPoll?.({ workspace: this.caller.workspace, pages, waiting: this.waiters.size });
      round.end(pages, found.length, failure);
    }
    return true;
  }

  /** The traces of the answers waiting here: what a poll links to. */
  private *waitingTraces(): Generator<AnswerTrace> {
    for (const waiter of this.allWaiters()) yield waiter.trace;
  }
}

/** A credential or workspace problem will not go away by polling again. */
function isPermanent(error: unknown): boolean {
  const status = (error as AdapterError | null)?.status;
  return status === 401 || status === 403 || status === 404 || status === 422;
}
