import { type QuerySnapshot, snapshotChanged } from "../core/query-snapshot.js";
import type { AnswerTrace } from "../telemetry/answer-trace.js";
import type { PacedWaiter, PollPace } from "./poll-pace.js";
import type { ChannelFollow } from "./realtime/channel-follow.js";

/** What the poller needs of a waiting watch (a {@link Mailbox}). */
export interface Waiter extends PacedWaiter {
  readonly id: string;
  deliver(snapshot: QuerySnapshot): void;
  fail(error: unknown): void;
  /** The trace of the answer it waits for: the polls that serve it link to it. */
  readonly trace: AnswerTrace;
}

/**
 * One waiting watch: hands the latest snapshot to its consumer. Snapshots are cumulative, so only
 * the newest is kept (a slow consumer costs one snapshot of memory, however many polls pass), and
 * one that shows nothing new does not wake the consumer at all: an idle stream costs a poll
 * nothing but the comparison. It is itself the poller's waiter, and listens to the abort signal
 * itself, so that a waiting stream holds one object here rather than four closures.
 */
export class Mailbox implements Waiter {
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
    readonly trace: AnswerTrace,
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
