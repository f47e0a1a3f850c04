import { type Callback, Cluster, type ClusterNode } from "ioredis";
import { type Clock, systemClock } from "../util/clock.js";

/** A cluster client's options, as ioredis's constructor types them (replies mapped as ioredis always has). */
export type PacedClusterOptions = NonNullable<ConstructorParameters<typeof Cluster<"legacy">>[1]>;

/**
 * A Redis Cluster client that asks for the slot map at most once per `spacingMs`
 * (docs/scale-out.md#in-a-failover). ioredis asks again after every redirection and, after
 * `retryDelayOnFailover`, after every command a dead node failed; each time it loops over the
 * 16,384 slots, milliseconds of the event loop per refresh (5.3 ms on a two-core machine). In a
 * master's failover they came back to back, and held every request of the replica, those whose
 * keys live on masters that never failed too. A refresh asked for sooner starts once the spacing has passed,
 * and answers every caller that asked meanwhile. A redirection still corrects its own slot at once
 * (ioredis does that before it asks for the map), and the map still follows a failover within
 * the spacing of the replica's promotion.
 */
export class PacedCluster extends Cluster {
  private lastRefreshEnded = Number.NEGATIVE_INFINITY;
  private deferred: unknown;
  private deferredCallbacks: Callback<void>[] = [];

  constructor(
    nodes: ClusterNode[],
    options: PacedClusterOptions,
    private readonly spacingMs: number,
    private readonly clock: Pick<Clock, "now" | "setTimeout"> = systemClock,
  ) {
    super(nodes, options);
  }

  override refreshSlotsCache(callback?: Callback<void>): void {
    // Cluster's own constructor asks for the first map before this class's fields exist: at once.
    if (this.deferredCallbacks === undefined) return super.refreshSlotsCache(callback);
    const wait = this.lastRefreshEnded + this.spacingMs - this.clock.now();
    if (wait <= 0 && this.deferred === undefined) return this.refreshNow(callback ? [callback] : []);
    if (callback) this.deferredCallbacks.push(callback);
    this.deferred ??= this.clock.setTimeout(() => {
      this.deferred = undefined;
      this.refreshNow(this.deferredCallbacks.splice(0));
    }, Math.max(0, wait));
  }

  private refreshNow(callbacks: Callback<void>[]): void {
    super.refreshSlotsCache((error) => {
      this.lastRefreshEnded = this.clock.now();
      for (const callback of callbacks) callback(error);
    });
  }
}
