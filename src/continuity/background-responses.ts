import type { Logger } from "pino";
import type { StreamEncoder } from "../answer/answer-encoder.js";
import type { ChoiceSent } from "../answer/answer-events.js";
import type { RunningAnswer } from "../answer/answer-service.js";
import type { SseFrame } from "../core/sse-frame.js";
import { type AdapterError, toAdapterError } from "../errors/adapter-error.js";
import type { Clock } from "../util/clock.js";
import { type BackgroundRecord, type BackgroundStore, ENDED_STATUSES, isTerminalFrame, sequenceOf, UNNUMBERED } from "./background-store.js";

/** A response object as the background runner handles it: it only reads and sets `status`. */
export type ResponseBody = BackgroundRecord["response"];

/**
 * The Responses stream encoder as a background answer drives it: its frames, and the response
 * object as it stands (in progress, failed) or `finished` once `close` made it complete.
 */
export interface BackgroundEncoder extends StreamEncoder {
  current(end: { status: "failed"; error: AdapterError; at: number } | null): ResponseBody;
  readonly finished: ResponseBody | undefined;
}

/** One answer to run in the background: its record, the answer whose queries exist, how to encode and remember it. */
export interface BackgroundJob {
  record: BackgroundRecord;
  answer: RunningAnswer;
  encoder: BackgroundEncoder;
  /** The answer's controller: aborted by a cancel (from any replica), never by a client leaving. */
  controller: AbortController;
  /** Remembers the answer (the stored response, the conversation) before its terminal frame is appended; never rejects. */
  beforeEnd: (sent: ChoiceSent[]) => Promise<void>;
  /** Gives back what the answer holds while it runs (its place under the caps, the key's slot). */
  release: () => void;
}

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
  /** Told when a background answer starts and ends (metrics). */
  onRunning?: (change: 1 | -1) => void;
}

/** What `cancel` found: the response it ended as `cancelled`, or the one that had ended before. */
export type CancelOutcome = { cancelled: true; response: ResponseBody } | { cancelled: false; response: ResponseBody };

/**
 * Answers that outlive their request (docs/responses-api.md#background-mode): the Responses stream
 * encoder's frames appended to an event log instead of a socket, which any replica follows from any
 * `sequence_number`, retrieves the state of, and cancels. The workspace query keeps going whatever
 * becomes of the client; a cancel stops the adapter's wait for it (the interface has no cancel).
 * The answers this replica runs, and the followers waiting here, hang on this object.
 */
export class BackgroundResponses {
  private readonly running = new Map<string, AbortController>();
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(private readonly options: BackgroundOptions) {}

  /** Background answers this replica runs now. */
  get inFlight(): number {
    return this.running.size;
  }

  /**
   * Records the response and appends its opening frames, then runs the answer without waiting for
   * it: the caller answers its client at once.
   */
  async start(job: BackgroundJob): Promise<void> {
    const { store, ttlSeconds } = this.options;
    const { id } = job.record;
    try {
      await store.create(job.record, ttlSeconds);
      await store.lease(id, this.options.replica, this.options.leaseMs);
      await store.append(id, job.encoder.open(), ttlSeconds, this.options.replica);
    } catch (error) {
      job.controller.abort();
      job.release();
      throw error;
    }
    this.launch(job);
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

  /**
   * Takes over a background answer whose replica is gone (its lease ran out): this replica then
   * follows the workspace query from where the log stops (`build` makes the job: the encoder
   * brought to the log's end, the answer following the query). False when the answer ended, runs
   * here, or another replica holds its lease.
   */
  async takeOver(record: BackgroundRecord, build: () => Promise<BackgroundJob>): Promise<boolean> {
    const { store, replica, leaseMs } = this.options;
    if (this.running.has(record.id) || hasEnded(record.response)) return false;
    if (!(await store.lease(record.id, replica, leaseMs))) return false;
    let job: BackgroundJob;
    try {
      job = await build();
    } catch (error) {
      // Nobody else will carry it on: it ends failed rather than stay in progress until it expires.
      const message = `The background answer could not be carried on after its replica stopped: ${(error as Error).message}`;
      const response = { ...record.response, status: "failed", error: { code: "server_error", message } };
      await this.end(record.id, response, [{ event: "response.failed", data: { type: "response.failed", sequence_number: UNNUMBERED, response } }]);
      throw error;
    }
    this.options.logger.info({ responseId: record.id, queryId: record.queryId }, "background answer taken over from a replica that is gone");
    this.launch(job);
    return true;
  }

  private launch(job: BackgroundJob): void {
    this.running.set(job.record.id, job.controller);
    this.options.onRunning?.(1);
    void this.run(job);
  }

  private async run(job: BackgroundJob): Promise<void> {
    const { id } = job.record;
    const { encoder, answer, controller } = job;
    const stopWatching = this.watch(id, controller);
    const events = answer.events(true);
    try {
      let finished = 0;
      for await (const event of events) {
        if (event.type === "failed") {
          await this.end(id, encoder.current({ status: "failed", error: event.error, at: this.seconds() }), encoder.fail(event.error));
          return;
        }
        if (event.type === "finished") finished += 1;
        if (!(await this.append(id, encoder.encode(event)))) {
          controller.abort();
          return;
        }
      }
      // Fewer than every choice finished: the answer was cancelled, whose frame is in the log already.
      if (finished < answer.queryIds.length) return;
      const sent = encoder.sent();
      const usage = await answer.usage(sent);
      const closing = encoder.close(usage);
      await job.beforeEnd(sent);
      await this.end(id, encoder.finished ?? encoder.current(null), closing);
    } catch (error) {
      const failure = toAdapterError(error);
      if (controller.signal.aborted) return;
      this.options.logger.warn({ responseId: id, err: { message: failure.message } }, "background answer failed");
      await this.end(id, encoder.current({ status: "failed", error: failure, at: this.seconds() }), encoder.fail(failure)).catch(() => undefined);
    } finally {
      stopWatching();
      await events.return(undefined);
      this.running.delete(id);
      this.options.onRunning?.(-1);
      job.release();
    }
  }

  /**
   * Renews this replica's lease on a running answer, and notices a cancel made on another replica
   * (the log has ended): the answer's wait is then aborted.
   */
  private watch(id: string, controller: AbortController): () => void {
    const { clock, store, leaseMs, replica } = this.options;
    let timer: unknown;
    const tick = () => {
      void Promise.all([store.ended(id), store.lease(id, replica, leaseMs)])
        .then(([ended, leased]) => {
          // Cancelled elsewhere, or taken over by a replica that thought this one gone.
          if (ended || !leased) controller.abort();
        })
        .catch(() => undefined)
        .finally(() => {
          if (!controller.signal.aborted) timer = clock.setTimeout(tick, Math.max(1, Math.floor(leaseMs / 3)));
        });
    };
    timer = clock.setTimeout(tick, Math.max(1, Math.floor(leaseMs / 3)));
    return () => clock.clearTimeout(timer);
  }

  private async append(id: string, frames: SseFrame[]): Promise<boolean> {
    if (frames.length === 0) return true;
    const appended = await this.options.store.append(id, frames, this.options.ttlSeconds, this.options.replica);
    if (appended) this.wake(id);
    return appended;
  }

  private async end(id: string, response: ResponseBody, frames: SseFrame[]): Promise<boolean> {
    const ended = await this.options.store.end(id, response, frames, this.options.ttlSeconds);
    if (ended) this.wake(id);
    return ended;
  }

  /**
   * Cancels a background response from any replica: its final object becomes `cancelled` and its
   * log ends with `response.incomplete` carrying it (the Responses API streams no cancel event), and
   * the replica that runs it stops waiting for the query (at once here, within a lease's third on
   * another). A response that had ended is left as it was (`cancelled: false`).
   */
  async cancel(record: BackgroundRecord): Promise<CancelOutcome> {
    const response = { ...record.response, status: "cancelled" };
    const frame = { event: "response.incomplete", data: { type: "response.incomplete", sequence_number: UNNUMBERED, response } };
    if (await this.end(record.id, response, [frame])) {
      this.running.get(record.id)?.abort();
      return { cancelled: true, response };
    }
    const now = await this.options.store.get(record.id);
    return { cancelled: false, response: now?.response ?? record.response };
  }

  /**
   * The frames of a response's log after `after`, then the ones appended later as they come, until
   * its terminal frame (or the response is gone, or `signal` aborts): from any replica.
   */
  async *follow(id: string, after: number, signal: AbortSignal): AsyncGenerator<SseFrame> {
    let last = after;
    while (!signal.aborted) {
      // Asked before reading: once it has ended, the frames read next include its last.
      const ended = await this.options.store.ended(id);
      const frames = await this.options.store.events(id, last);
      for (const frame of frames) {
        yield frame;
        last = sequenceOf(frame);
        if (isTerminalFrame(frame)) return;
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

  private seconds(): number {
    return Math.floor(this.options.clock.now() / 1000);
  }
}

/** Whether a response object's status is final. */
export function hasEnded(response: ResponseBody): boolean {
  return (ENDED_STATUSES as readonly string[]).includes(response.status);
}
