import type { Logger } from "pino";
import type { SseFrame } from "../../core/sse-frame.js";
import type { Clock } from "../../util/clock.js";
import { lookupOrUnavailable, owned } from "../access.js";
import { type BackgroundEncoder, BackgroundLog, type LogWriter, type ResponseBody } from "./background-log.js";
import { type BackgroundRecord, type BackgroundStore, ENDED_STATUSES, sequenceOf } from "./background-store.js";

/** Settings of background answers. */
export interface BackgroundOptions {
  store: BackgroundStore;
  clock: Clock;
  logger: Logger;
  ttlSeconds: number;
  /** This replica's name in leases (random per process). */
  replica: string;
  /** How long a replica's lease on an answer it runs lasts; it is renewed at a third of it, and a cancel made elsewhere is noticed as often. */
  leaseMs: number;
  /** How often a follower looks for events another replica appended (in process, appends wake it at once). */
  followPollMs: number;
  /** Told when a background answer starts and ends running here (metrics). */
  onRunning?: ((change: 1 | -1) => void) | undefined;
  /** A request was refused because the store could not answer a lookup (metrics). */
  onRefused?: (() => void) | undefined;
}

/**
 * How a background answer ends when it is not its encoder that ends it (a cancel, a takeover
 * refused): its final object and its log's terminal frames, in its dialect's shape (a frame whose
 * `sequence_number` is `UNNUMBERED` is numbered by the store).
 */
export interface BackgroundEnding {
  response: ResponseBody;
  frames: SseFrame[];
}

/** Whether a frame ends a background answer's log: its dialect's terminal events. */
export type TerminalTest = (frame: SseFrame) => boolean;

/** What `cancel` found: the response it ended as `cancelled`, or the one that had ended before. */
export type CancelOutcome = { cancelled: true; response: ResponseBody } | { cancelled: false; response: ResponseBody };

/** A background answer whose lease this replica took from a replica that is gone (`BackgroundResponses.adopt`). */
export interface Adopted {
  /** Its event log so far. */
  readonly frames: SseFrame[];
  /** Carries the answer on here from the end of its log: the log its frames go on in. */
  carryOn(encoder: BackgroundEncoder, controller: AbortController): BackgroundLog;
  /** Gives the answer up: it ends as `ending` says (failed, saying why: nobody else would carry it on), rather than stay in progress until it expires. */
  refuse(ending: BackgroundEnding): Promise<void>;
}

/**
 * Answers that outlive their request (docs/responses-api.md#background-mode): their records and
 * event logs, which any replica retrieves, follows from any `sequence_number` and cancels. The
 * answers themselves run through the answer runner, whose stream loop writes each one's frames to
 * its `BackgroundLog`; this keeps which ones run here, renews their leases, and wakes the followers
 * waiting here. The workspace query keeps going whatever becomes of the client; a cancel stops the
 * adapter's wait for it (the interface has no cancel).
 */
export class BackgroundResponses implements LogWriter {
  private readonly running = new Map<string, AbortController>();
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(private readonly options: BackgroundOptions) {}

  get logger(): Logger {
    return this.options.logger;
  }

  /** Background answers this replica runs now. */
  get inFlight(): number {
    return this.running.size;
  }

  /**
   * A background answer this caller may see (`owned`), or null when there is none of that id for
   * them (the route answers that as its 404); a 503 when the store does not answer.
   */
  async visible(id: string, principal: string, workspace: string | undefined): Promise<BackgroundRecord | null> {
    const record = await this.lookup(() => this.options.store.get(id), id);
    return record && owned(record, principal, workspace) ? record : null;
  }

  /** How many frames a response's log holds (the next frame's `sequence_number`); a 503 when the store does not answer. */
  size(id: string): Promise<number> {
    return this.lookup(() => this.options.store.size(id), id);
  }

  /** A response's whole log so far; a 503 when the store does not answer. */
  events(id: string): Promise<SseFrame[]> {
    return this.lookup(() => this.options.store.events(id, -1), id);
  }

  delete(id: string): Promise<boolean> {
    return this.options.store.delete(id);
  }

  /**
   * Records a new background response, takes its lease and appends its opening frames: the log its
   * answer's frames go to, with the answer counted as running here. Throws when the store does not
   * take it (nothing runs then).
   */
  async open(record: BackgroundRecord, encoder: BackgroundEncoder, controller: AbortController): Promise<BackgroundLog> {
    const { store, ttlSeconds, replica, leaseMs } = this.options;
    await store.create(record, ttlSeconds);
    await store.lease(record.id, replica, leaseMs);
    await store.append(record.id, encoder.open(), ttlSeconds, replica);
    return this.logOf(record.id, encoder, controller);
  }

  /**
   * Takes the lease of a background answer whose replica is gone (its lease ran out), for this
   * replica to carry it on from where its log stops. Null when the answer ended, runs here, or
   * another replica holds its lease.
   */
  async adopt(record: BackgroundRecord): Promise<Adopted | null> {
    const { store, replica, leaseMs, logger } = this.options;
    if (this.running.has(record.id) || hasEnded(record.response)) return null;
    if (!(await store.lease(record.id, replica, leaseMs))) return null;
    const frames = await store.events(record.id, -1);
    return {
      frames,
      carryOn: (encoder, controller) => {
        logger.info({ responseId: record.id, queryId: record.queryId }, "background answer taken over from a replica that is gone");
        return this.logOf(record.id, encoder, controller);
      },
      refuse: async (ending) => {
        await this.end(record.id, ending.response, ending.frames);
      },
    };
  }

  /**
   * Stops following every answer this replica runs, without ending any (docs/responses-api.md#background-mode):
   * a replica that shuts down hands its background answers over; their queries go on upstream, and
   * the next retrieve on another replica takes each over once its lease runs out.
   */
  close(): void {
    for (const controller of this.running.values()) controller.abort();
  }

  /** Whether this replica runs the answer of response `id` now. */
  runsHere(id: string): boolean {
    return this.running.has(id);
  }

  /** The log of an answer that runs here from now on: its lease renewed until the log is closed. */
  private logOf(id: string, encoder: BackgroundEncoder, controller: AbortController): BackgroundLog {
    this.running.set(id, controller);
    this.options.onRunning?.(1);
    const stopWatching = this.watch(id, controller);
    let closed = false;
    return new BackgroundLog(this, id, encoder, controller, () => {
      if (closed) return;
      closed = true;
      stopWatching();
      if (this.running.get(id) === controller) this.running.delete(id);
      this.options.onRunning?.(-1);
    });
  }

  /**
   * Renews this replica's lease on a running answer, and notices a cancel made on another replica
   * (the log has ended): the answer's wait is then aborted. Stopped (the answer no longer runs
   * here), it renews nothing more, even when a renewal was in flight: a lease renewed after a final
   * write that failed would keep the answer `in_progress`, no other replica able to take it over.
   */
  private watch(id: string, controller: AbortController): () => void {
    const { clock, store, leaseMs, replica } = this.options;
    let timer: unknown;
    let stopped = false;
    const tick = () => {
      void Promise.all([store.ended(id), store.lease(id, replica, leaseMs)])
        .then(([ended, leased]) => {
          // Cancelled elsewhere, or taken over by a replica that thought this one gone.
          if (ended || !leased) controller.abort();
        })
        .catch(() => undefined)
        .finally(() => {
          if (!stopped && !controller.signal.aborted) timer = clock.setTimeout(tick, Math.max(1, Math.floor(leaseMs / 3)));
        });
    };
    timer = clock.setTimeout(tick, Math.max(1, Math.floor(leaseMs / 3)));
    return () => {
      stopped = true;
      clock.clearTimeout(timer);
    };
  }

  /** Appends an answer's frames unless it ended or another replica holds its lease; wakes the followers waiting here. */
  async append(id: string, frames: readonly SseFrame[]): Promise<boolean> {
    if (frames.length === 0) return true;
    const appended = await this.options.store.append(id, [...frames], this.options.ttlSeconds, this.options.replica);
    if (appended) this.wake(id);
    return appended;
  }

  /** Ends a response with its final object and terminal frames, unless it had ended; wakes the followers waiting here. */
  async end(id: string, response: ResponseBody, frames: readonly SseFrame[]): Promise<boolean> {
    const ended = await this.options.store.end(id, response, [...frames], this.options.ttlSeconds);
    if (ended) this.wake(id);
    return ended;
  }

  seconds(): number {
    return Math.floor(this.options.clock.now() / 1000);
  }

  /**
   * Cancels a background answer from any replica: it ends as its dialect's `ending` says (its final
   * object `cancelled`, its log's terminal frames), and the replica that runs it stops waiting for
   * the query (at once here, within a lease's third on another). An answer that had ended is left
   * as it was (`cancelled: false`).
   */
  async cancel(record: BackgroundRecord, ending: BackgroundEnding): Promise<CancelOutcome> {
    const { response } = ending;
    if (await this.end(record.id, response, ending.frames)) {
      this.running.get(record.id)?.abort();
      return { cancelled: true, response };
    }
    const now = await this.options.store.get(record.id);
    return { cancelled: false, response: now?.response ?? record.response };
  }

  /**
   * The frames of a background answer's log after `after`, then the ones appended later as they
   * come, until it has ended (a frame its dialect's `isTerminal` says ends it; or the answer is gone,
   * or `signal` aborts): from any replica.
   */
  async *follow(id: string, after: number, signal: AbortSignal, isTerminal: TerminalTest): AsyncGenerator<SseFrame> {
    let last = after;
    while (!signal.aborted) {
      // Asked before reading: once it has ended, the frames read next include its last.
      const ended = await this.options.store.ended(id);
      const frames = await this.options.store.events(id, last);
      for (const frame of frames) {
        yield frame;
        last = sequenceOf(frame);
        if (isTerminal(frame)) return;
      }
      if (ended) return;
      if (frames.length === 0) await this.nextAppend(id, signal);
    }
  }

  /** Resolves when this replica appends to the log, after the follow interval (another replica may have), or on abort. */
  private nextAppend(id: string, signal: AbortSignal): Promise<void> {
    const { clock, followPollMs } = this.options;
    return new Promise<void>((resolve) => {
      const waiting = this.waiters.get(id) ?? new Set<() => void>();
      this.waiters.set(id, waiting);
      const done = () => {
        clock.clearTimeout(timer);
        signal.removeEventListener("abort", done);
        waiting.delete(done);
        if (waiting.size === 0 && this.waiters.get(id) === waiting) this.waiters.delete(id);
        resolve();
      };
      const timer = clock.setTimeout(done, followPollMs);
      signal.addEventListener("abort", done);
      waiting.add(done);
    });
  }

  private wake(id: string): void {
    const waiting = this.waiters.get(id);
    if (waiting) for (const done of [...waiting]) done();
  }

  /** A lookup of a background response; its failure refuses the request (a 503, `lookupOrUnavailable`). */
  private lookup<T>(find: () => Promise<T>, id: string): Promise<T> {
    const lookup = { what: `The stored response '${id}'`, code: "response_store_unavailable", store: "background response" };
    return lookupOrUnavailable(find, lookup, this.options);
  }
}

/** Whether a response object's status is final. */
export function hasEnded(response: ResponseBody): boolean {
  return (ENDED_STATUSES as readonly string[]).includes(response.status);
}
