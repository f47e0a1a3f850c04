import type { QuerySnapshot } from "../../core/query-snapshot.js";
import type { RealtimeChannel } from "../../core/realtime-channel.js";
import { ChannelView } from "../../upstream/realtime/channel-view.js";
import { readPublication } from "../../upstream/realtime/read-publication.js";
import type {
  ChannelListener,
  ChannelSubscription,
  FallbackReason,
  RealtimeHub,
  RealtimeSubscriber,
} from "../../upstream/realtime/realtime-hub.js";

/** The fields of a publication the adapter reads (docs/upstream-assumptions.md#realtime). */
const READ_FIELDS = ["delta", "output", "status", "step", "steps"] as const;

/** What one query's realtime channel did, as the adapter's own reading of it saw it. */
export interface ChannelObservation {
  channel: RealtimeChannel;
  /** The adapter's view of the channel (channel-view.ts), fed every publication. */
  view: ChannelView;
  /** The hub would not follow it at all (its host not allowed, or already followed). */
  notFollowed: boolean;
  subscribed: boolean;
  interruptions: number;
  publications: number;
  /** Publications carrying each field the adapter reads. */
  fields: Record<(typeof READ_FIELDS)[number], number>;
  /** Publications the adapter ignores, and the shapes they had (their keys, or their type). */
  ignored: number;
  ignoredShapes: Set<string>;
  duplicates: number;
  gaps: number;
  /** Whether the channel published a terminal status. */
  terminal: boolean;
  /** Why the channel was given up, in order. */
  fallbacks: FallbackReason[];
}

/** A fresh observation of a query's channel, its view starting from the create answer. */
export function observationOf(initial: QuerySnapshot, channel: RealtimeChannel): ChannelObservation {
  return {
    channel,
    view: new ChannelView(initial, channel.since.offset),
    notFollowed: false,
    subscribed: false,
    interruptions: 0,
    publications: 0,
    fields: { delta: 0, output: 0, status: 0, step: 0, steps: 0 },
    ignored: 0,
    ignoredShapes: new Set(),
    duplicates: 0,
    gaps: 0,
    terminal: false,
    fallbacks: [],
  };
}

/**
 * The adapter's realtime hub with an observer on each subscription (docs/check.md#realtime): the
 * query watcher follows the channel exactly as the adapter does, while every publication is also
 * counted and applied to a view of the observation's own. When the watcher is done with a query
 * (the list showed its end), the subscription is kept for up to `graceMs` more, until the channel
 * shows the end too, so that a channel a little behind the list (or still subscribing: it recovers
 * from `since`) is not taken for a short or a silent one.
 */
export class ObservingSubscriber implements RealtimeSubscriber {
  private readonly closing = new Set<Promise<void>>();

  constructor(
    private readonly hub: RealtimeHub,
    private readonly observations: ReadonlyMap<string, ChannelObservation>,
    private readonly graceMs: number,
  ) {}

  subscribe(channel: RealtimeChannel, listener: ChannelListener): ChannelSubscription | null {
    const observation = this.observations.get(channel.channel);
    if (!observation) return this.hub.subscribe(channel, listener);
    let forwarding = true;
    let ended: (() => void) | null = null;
    const subscription = this.hub.subscribe(channel, {
      publication: (data, offset) => {
        observe(observation, data, offset);
        if (observation.terminal) ended?.();
        if (forwarding) listener.publication(data, offset);
      },
      subscribed: () => {
        observation.subscribed = true;
        if (forwarding) listener.subscribed();
      },
      interrupted: () => {
        observation.interruptions += 1;
        if (forwarding) listener.interrupted();
      },
      failed: (reason) => {
        observation.fallbacks.push(reason);
        ended?.();
        if (forwarding) listener.failed(reason);
      },
    });
    if (!subscription) {
      observation.notFollowed = true;
      return null;
    }
    return {
      close: () => {
        forwarding = false;
        // (`silent` only paces the polling: the channel may still speak.)
        if (observation.terminal || observation.fallbacks.some((reason) => reason !== "silent")) {
          subscription.close();
          return;
        }
        const done = new Promise<void>((resolve) => {
          const timer = setTimeout(() => ended?.(), this.graceMs);
          ended = () => {
            ended = null;
            clearTimeout(timer);
            subscription.close();
            resolve();
          };
        });
        this.closing.add(done);
        void done.then(() => this.closing.delete(done));
      },
    };
  }

  fellBack(reason: FallbackReason, channel: RealtimeChannel): void {
    this.observations.get(channel.channel)?.fallbacks.push(reason);
    this.hub.fellBack(reason, channel);
  }

  /** Resolves once every subscription kept open for its channel's end is closed. */
  async settled(): Promise<void> {
    await Promise.all([...this.closing]);
  }
}

/** Counts one publication by what the adapter reads of it, and applies it to the observation's view. */
function observe(observation: ChannelObservation, data: unknown, offset: number | undefined): void {
  observation.publications += 1;
  const publication = readPublication(data);
  const read = publication ? READ_FIELDS.filter((field) => publication[field] !== undefined) : [];
  for (const field of read) observation.fields[field] += 1;
  if (read.length === 0) {
    observation.ignored += 1;
    observation.ignoredShapes.add(shapeOf(data));
  }
  const effect = observation.view.apply(data, offset);
  if (effect === "duplicate") observation.duplicates += 1;
  if (effect === "gap") observation.gaps += 1;
  if (effect === "terminal") observation.terminal = true;
}

/** A value's shape for a person: an object's keys, or its type. */
export function shapeOf(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object" && value !== null) return ["{", Object.keys(value).sort().join(", "), "}"].join("");
  return value === null ? "null" : `a ${typeof value}`;
}
