import type { Span } from "@opentelemetry/api";
import { credentialHash } from "../auth/credential-hash.js";
import { type AdapterError, GatewayTimeoutError } from "../errors/adapter-error.js";
import type { AnswerTrace } from "../telemetry/answer-trace.js";
import { endPollSpan, recordSharedPoll, startPollSpan } from "../telemetry/poll-spans.js";
import { traceparentOf, type Tracing } from "../telemetry/tracing.js";
import type { Clock } from "../util/clock.js";
import {
  isTerminal,
  mergeSnapshots,
  type QuerySnapshot,
  snapshotChanged,
} from "../core/query-snapshot.js";
import type { RealtimeChannel } from "../core/realtime-channel.js";
import { ChannelFollow, type PollPace } from "./realtime/channel-follow.js";
import type { RealtimeSubscriber } from "./realtime/realtime-hub.js";
import type { PollSharing, SharedGroup } from "./poll-sharing.js";
import type { UpstreamQuery } from "./query-schemas.js";
import { toQuerySnapshot } from "./to-query-snapshot.js";
import { followPages, type PageRequest } from "./follow-pages.js";
import type { Caller, WorkspaceClient } from "./workspace-client.js";

/** Settings of the shared pollers (docs/upstream-assumptions.md#polling). */
export interface WatcherOptions {
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
  /** Follows queries' realtime channels; without it (`REALTIME=off`) every query is polled alone. */
  realtime?: RealtimeSubscriber;
  /** Quiet time after which a live channel no longer relaxes its query's polling (default: twice the longest interval). */
  channelSilenceMs?: number;
  /** Shares each workspace's polling with other replicas (with Redis); without it, each replica polls alone. */
  sharing?: PollSharing;
  /** Traces each poll as a short trace of its own, linked to the answers it serves (docs/observability.md). */
  tracing?: Tracing | undefined;
}

/** One watch: a query to follow, for whom, until when. */
export interface WatchRequest {
  caller: Caller;
  /** The create answer: the first snapshot, maybe already terminal. */
  initial: QuerySnapshot;
  deadlineMs: number;
  /** Describes the query in a timeout message (`ask query …`). */
  label: string;
  signal: AbortSignal;
  /** The query's realtime channel, from the create answer: followed alongside the poller when given. */
  channel?: RealtimeChannel;
  /** Told once how the watch ended: the terminal status, a timeout, an error, or cancelled. */
  onEnd?: (end: WatchEnd) => void;
  /** The answer's span, when traced: polls link to it, the realtime channel reports to it. */
  trace?: AnswerTrace | undefined;
}

/** How a watch ended (for metrics). */
export type WatchEnd = "PROCESSED" | "FAILED" | "timeout" | "cancelled" | "error";

/**
 * Follows queries until they end. Polling is shared: one poller per (credential, workspace)
 * lists `GET /queries?limit=100` once per interval for every request waiting in that workspace,
 * follows `next_cursor` (never built or edited) only while some waited-for id is still missing,
 * and stops when nothing waits. The interface has no `GET /queries/{id}` (docs/architecture.md#queries).
 * A query's realtime channel, when it has one, feeds the same snapshot stream (merged with the
 * list, which stays the source of truth) and makes the poller confirm its end at once
 * (docs/upstream-assumptions.md#realtime).
 */
export class QueryWatcher {
  private readonly pollers = new Map<string, WorkspacePoller>();

  constructor(private readonly options: WatcherOptions) {}

  /**
   * Snapshots of one query as they change, starting with `initial` and ending with a terminal one.
   * Throws `GatewayTimeoutError` at the deadline and the poll error when polling keeps failing;
   * ends quietly (without a terminal snapshot) when `signal` aborts.
   */
  async *watch(request: WatchRequest): AsyncGenerator<QuerySnapshot> {
    let latest = request.initial;
    let end: WatchEnd = "cancelled";
    let mailbox: Mailbox | null = null;
    let poller: WorkspacePoller | undefined;
    let deadline: unknown = null;
    try {
      if (isTerminal(latest.status)) end = latest.status as WatchEnd;
      yield latest;
      if (isTerminal(latest.status) || request.signal.aborted) return;

      mailbox = new Mailbox(latest, this.options.clock.now(), request.signal, request.trace);
      const key = pollerKey(request.caller);
      poller = this.pollers.get(key);
      if (!poller) {
        poller = new WorkspacePoller(this.options, request.caller, () => this.pollers.delete(key));
        this.pollers.set(key, poller);
      }
      const box = mailbox;
      deadline = this.options.clock.setTimeout(
        () => box.fail(new GatewayTimeoutError(`The ${request.label} did not finish within ${request.deadlineMs} ms`)),
        request.deadlineMs,
      );
      poller.add(mailbox);
      const { realtime } = this.options;
      if (request.channel && realtime) {
        const active = poller;
        mailbox.follow = new ChannelFollow(
          latest,
          request.channel,
          realtime,
          { offer: (snapshot) => box.offer(snapshot), pollSoon: () => active.pollSoon(), repace: () => active.repace() },
          this.options.clock,
          this.options.channelSilenceMs ?? 2 * this.options.pollIntervalMaxMs,
          request.trace,
        );
      }
      while (true) {
        const next = await mailbox.take();
        if (!next) return;
        latest = mergeSnapshots(latest, next);
        if (isTerminal(latest.status)) end = latest.status as WatchEnd;
        yield latest;
        if (isTerminal(latest.status)) return;
      }
    } catch (error) {
      end = error instanceof GatewayTimeoutError ? "timeout" : "error";
      throw error;
    } finally {
      if (deadline !== null) this.options.clock.clearTimeout(deadline);
      if (mailbox) {
        mailbox.follow?.close();
        mailbox.stop();
        poller?.remove(mailbox);
      }
      request.onEnd?.(end);
    }
  }

  /** How many pollers are running (one per credential and workspace with waiting queries). */
  get activePollers(): number {
    return this.pollers.size;
  }

  /** How many distinct queries the pollers are waiting for. */
  get waitingQueries(): number {
    let count = 0;
    for (const poller of this.pollers.values()) count += poller.waitingCount;
    return count;
  }
}

/** What the poller needs of a waiting watch (a {@link Mailbox}). */
interface Waiter {
  readonly id: string;
  readonly since: number;
  deliver(snapshot: QuerySnapshot): void;
  fail(error: unknown): void;
  /** How soon it wants the next poll (its realtime channel may make that sooner or later). */
  pace(now: number): PollPace;
  /** The span of the answer it waits for, when traced: the polls that serve it link to it. */
  readonly trace: AnswerTrace | undefined;
}

/** The poller of one (credential, workspace): one list call per interval for all its waiters. */
class WorkspacePoller {
  private readonly waiters = new Map<string, Set<Waiter>>();
  private timer: unknown = null;
  private dueAt = Number.POSITIVE_INFINITY;
  private inFlight: AbortController | null = null;
  private failures = 0;
  /** A poll was asked for while one was in flight: poll again as soon as it ends. */
  private again = false;
  /** This workspace's polling shared with other replicas, when there are any. */
  private readonly shared: SharedGroup | null;

  constructor(
    private readonly options: WatcherOptions,
    private readonly caller: Caller,
    private readonly onIdle: () => void,
  ) {
    const group = `${credentialKeyOf(caller)}:${caller.workspace}`;
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
    const { tracing } = this.options;
    if (!tracing || pollTraceparent === undefined) return;
    const served: Span[] = [];
    for (const item of items) {
      for (const waiter of this.waiters.get(item.id) ?? []) if (waiter.trace) served.push(waiter.trace.span);
    }
    recordSharedPoll(tracing, pollTraceparent, this.caller.workspace, served, items.length);
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
    const { tracing, clock } = this.options;
    this.timer = tracing ? tracing.withoutLogSpan(() => clock.setTimeout(fire, delay)) : clock.setTimeout(fire, delay);
  }

  /**
   * The interval adapts to the youngest waiting query: fast while it is new (most answers come
   * within seconds), slower as it ages (a long `build` query needs no 10 polls a second), and
   * slower again while polls fail. A query whose realtime channel is live and speaking needs only
   * the slowest interval; one whose channel showed its end needs the fastest.
   */
  private nextDelay(): number {
    const { pollIntervalMinMs: min, pollIntervalMaxMs: max, clock } = this.options;
    const now = clock.now();
    let youngest = Number.POSITIVE_INFINITY;
    for (const set of this.waiters.values()) {
      for (const waiter of set) {
        const pace = waiter.pace(now);
        if (pace === "urgent") youngest = 0;
        else if (pace === "normal") youngest = Math.min(youngest, now - waiter.since);
      }
    }
    const byAge = Math.max(min, Math.min(max, youngest / 4));
    return Math.min(max, byAge * 2 ** Math.min(this.failures, 5));
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
    const { tracing } = this.options;
    const others = turn.othersWaitFor.length;
    const span = tracing ? startPollSpan(tracing, this.caller.workspace, this.servedSpans(), others) : undefined;
    const round = () => this.listRound(controller, turn.othersWaitFor, span);
    const goesOn = span && tracing ? await tracing.withLogSpan(span, round) : await round();
    if (!goesOn) return;
    const again = this.again;
    this.again = false;
    if (this.waiters.size > 0) this.schedule(again ? 0 : this.nextDelay());
  }

  /**
   * One round of list calls, under the poll's span when traced: pages until every waited-for id
   * is found, the findings delivered and shared. Returns whether polling goes on (not after an
   * abort, nor after a failure that was handed to the waiters).
   */
  private async listRound(controller: AbortController, othersWaitFor: readonly string[], span?: Span): Promise<boolean> {
    const missing = new Set([...this.waiters.keys(), ...othersWaitFor]);
    const found: UpstreamQuery[] = [];
    let pages = 0;
    let failure: unknown;
    try {
      const { client } = this.options;
      const list = (request: PageRequest) => client.listQueries(this.caller, request, controller.signal, span);
      // Later pages are read only while some waited-for query is still missing.
      for await (const page of followPages(list, this.options.maxListPages)) {
        pages += 1;
        for (const item of page.items) if (missing.delete(item.id)) found.push(item);
        if (missing.size === 0) break;
      }
      this.failures = 0;
      this.deliverAll(found);
      this.shared?.share(found, span ? traceparentOf(span) : undefined);
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
      if (span) endPollSpan(span, pages, found.length, failure);
    }
    return true;
  }

  /** The answer spans of the requests waiting here (traced ones): what a poll links to. */
  private servedSpans(): Span[] {
    const spans: Span[] = [];
    for (const set of this.waiters.values()) for (const waiter of set) if (waiter.trace) spans.push(waiter.trace.span);
    return spans;
  }
}

/** A credential or workspace problem will not go away by polling again. */
function isPermanent(error: unknown): boolean {
  const status = (error as AdapterError | null)?.status;
  return status === 401 || status === 403 || status === 404 || status === 422;
}

/** Pollers are keyed by a hash of the credential, so that no raw credential is kept as a key. */
function pollerKey(caller: Caller): string {
  return `${credentialKeyOf(caller)}\u0000${caller.workspace}`;
}

/**
 * One waiting watch: hands the latest snapshot to its consumer. Snapshots are cumulative, so only
 * the newest is kept (a slow consumer costs one snapshot of memory, however many polls pass), and
 * one that shows nothing new does not wake the consumer at all: an idle stream costs a poll
 * nothing but the comparison. It is itself the poller's waiter, and listens to the abort signal
 * itself, so that a waiting stream holds one object here rather than four closures.
 */
class Mailbox implements Waiter {
  private latest: QuerySnapshot | null = null;
  private error: { value: unknown } | null = null;
  private closed = false;
  private wake: (() => void) | null = null;
  readonly id: string;
  /** The query's realtime channel, when followed: list snapshots are merged with it. */
  follow: ChannelFollow | null = null;

  constructor(
    /** The last snapshot the consumer saw: what a new one is compared with. */
    private seen: QuerySnapshot,
    readonly since: number,
    private readonly signal: AbortSignal,
    readonly trace: AnswerTrace | undefined,
  ) {
    this.id = seen.id;
    signal.addEventListener("abort", this);
  }

  /** A snapshot from the poller. */
  deliver(snapshot: QuerySnapshot): void {
    this.offer(this.follow ? this.follow.fromList(snapshot) : snapshot);
  }

  /** A snapshot to hand on, unless it shows nothing new. */
  offer(snapshot: QuerySnapshot): void {
    if (!snapshotChanged(this.latest ?? this.seen, snapshot)) return;
    this.latest = snapshot;
    this.notify();
  }

  pace(now: number): PollPace {
    return this.follow ? this.follow.pace(now) : "normal";
  }

  fail(error: unknown): void {
    this.error ??= { value: error };
    this.notify();
  }

  /** The abort signal's listener (an object listener, so no closure is kept per watch). */
  handleEvent(): void {
    this.closed = true;
    this.notify();
  }

  /** Stops listening to the signal once the watch is over. */
  stop(): void {
    this.signal.removeEventListener("abort", this);
  }

  /** The next snapshot with something new; null when closed; throws the failure. */
  async take(): Promise<QuerySnapshot | null> {
    while (true) {
      if (this.closed) return null;
      if (this.error) throw this.error.value;
      if (this.latest) {
        const snapshot = this.latest;
        this.latest = null;
        this.seen = snapshot;
        return snapshot;
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}

/** The caller's credential hash: the one its request computed, or computed here. */
function credentialKeyOf(caller: Caller): string {
  return caller.credentialKey ?? credentialHash(caller.credential);
}
