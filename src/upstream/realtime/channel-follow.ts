import type { QuerySnapshot } from "../../core/query-snapshot.js";
import type { RealtimeChannel } from "../../core/realtime-channel.js";
import { type AnswerTrace, type ChannelTrace, UNTRACED_CHANNEL } from "../../telemetry/answer-trace.js";
import type { Clock } from "../../util/clock.js";
import type { PollPace } from "../poll-pace.js";
import { ChannelView } from "./channel-view.js";
import type { ChannelListener, ChannelSubscription, FallbackReason, RealtimeSubscriber } from "./realtime-hub.js";

/** What a follow needs of its watch: where merged snapshots go, and how to move the next poll. */
export interface FollowHooks {
  /** A merged snapshot to hand to the consumer (it drops one that shows nothing new). */
  offer(snapshot: QuerySnapshot): void;
  /** Poll now (or right after the poll in flight): the channel says the query ended. */
  pollSoon(): void;
  /** The pace changed for the worse (the channel dropped or failed): poll at the normal interval again. */
  repace(): void;
}

/**
 * One watch's realtime channel (docs/upstream-assumptions.md#realtime): subscribes, feeds what the
 * channel publishes into the watch's snapshot stream merged with the list's latest, asks for an
 * immediate poll when the channel shows the query ended, and tells the poller how soon it needs
 * polling. Any fault leaves the watch to the poller with what the channel had already given.
 */
export class ChannelFollow implements ChannelListener {
  private readonly view: ChannelView;
  private list: QuerySnapshot;
  private subscription: ChannelSubscription | null;
  private live = false;
  private heardAt: number;
  /** When the channel showed a terminal status (null before). */
  private endedAt: number | null = null;
  private silenceReported = false;
  /** The subscription's trace (`UNTRACED_CHANNEL` when nothing records it, or nothing is subscribed). */
  private readonly traced: ChannelTrace;

  constructor(
    initial: QuerySnapshot,
    private readonly channel: RealtimeChannel,
    private readonly subscriber: RealtimeSubscriber,
    private readonly hooks: FollowHooks,
    private readonly clock: Clock,
    /** Quiet time after which a live channel no longer relaxes polling. */
    private readonly silenceMs: number,
    trace: AnswerTrace,
  ) {
    this.view = new ChannelView(initial, channel.since.offset);
    this.list = initial;
    this.heardAt = clock.now();
    this.subscription = subscriber.subscribe(channel, this);
    this.traced = this.subscription ? trace.startRealtime(channel.wsUrl) : UNTRACED_CHANNEL;
  }

  /** A list snapshot, merged with what the channel has shown. */
  fromList(snapshot: QuerySnapshot): QuerySnapshot {
    this.list = snapshot;
    return this.merged();
  }

  /** How soon this query wants polling (see {@link PollPace}). */
  pace(now: number): PollPace {
    // Until the list confirms the end, or for a silence's length if it never does (the channel erred).
    if (this.endedAt !== null && now - this.endedAt <= this.silenceMs) return "urgent";
    if (!this.subscription || !this.live) return "normal";
    if (now - this.heardAt > this.silenceMs) {
      if (!this.silenceReported) {
        this.silenceReported = true;
        this.subscriber.fellBack("silent", this.channel);
      }
      return "normal";
    }
    return "relaxed";
  }

  publication(data: unknown, offset: number | undefined): void {
    this.heardAt = this.clock.now();
    this.traced.publication();
    const effect = this.view.apply(data, offset);
    if (effect === "gap") {
      this.giveUp("unrecoverable");
      return;
    }
    if (effect === "ignored" || effect === "duplicate") return;
    this.hooks.offer(this.merged());
    if (effect === "terminal" && this.endedAt === null) {
      this.endedAt = this.clock.now();
      this.hooks.pollSoon();
    }
  }

  subscribed(): void {
    this.live = true;
    this.heardAt = this.clock.now();
  }

  interrupted(): void {
    this.live = false;
    this.hooks.repace();
  }

  failed(reason: FallbackReason): void {
    this.traced.end(reason);
    this.subscription = null;
    this.live = false;
    this.hooks.repace();
  }

  /** Unsubscribes (the watch is over). */
  close(): void {
    this.traced.end("closed");
    this.subscription?.close();
    this.subscription = null;
  }

  private merged(): QuerySnapshot {
    const snapshot = this.view.merge(this.list);
    if (this.view.diverged && this.subscription) this.giveUp("diverged");
    return snapshot;
  }

  private giveUp(reason: FallbackReason): void {
    if (!this.subscription) return;
    this.traced.end(reason);
    this.subscriber.fellBack(reason, this.channel);
    this.close();
    this.live = false;
    this.hooks.repace();
  }
}
