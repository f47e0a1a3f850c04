import type { Clock } from "../util/clock.js";
import type { RedisClient } from "./redis-connection.js";

/** What the connection watch tells the gate, and how it waits and probes. */
export interface ConnectionWatchOptions {
  /** How often a lost connection that says it is ready is probed with a PING. */
  probeIntervalMs: number;
  /** How long a command may wait for the first connection of all (start-up), at most. */
  firstConnectMs: number;
  clock: Pick<Clock, "setTimeout" | "clearTimeout">;
  /** The connection was lost: every node is out. */
  onLost: () => void;
  /** The connection is ready again (`wasLost`: after an outage, not the first connection). */
  onBack: (wasLost: boolean) => void;
}

/**
 * Whether the gate's connection itself is up (docs/architecture/redis.md#redis-down-or-slow): a lost
 * connection is an outage of every node at once (ioredis fails commands while it reconnects) until
 * it is ready again. A "close" can also come after the "ready" of its replacement (a Sentinel
 * failover), so a PING every `probeIntervalMs` through a connection that says it is ready ends the
 * outage too. At start-up the first connection is not an outage yet: commands wait for it a little.
 */
export class ConnectionWatch {
  /** The connection was lost (every node is out) until it is ready again, or a PING through it answers. */
  private lost = false;
  private probe: unknown;
  /** Whether the first connection attempt has ended (connected, or failed): before that, commands wait for it. */
  private settled: boolean;
  private closed = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly options: ConnectionWatchOptions,
  ) {
    this.settled = redis.status === "ready";
    redis.on("ready", () => {
      this.settled = true;
      this.back();
    });
    redis.on("close", () => {
      if (this.settled) this.connectionLost();
    });
  }

  /** Whether the connection is ready and not known to be lost. */
  get up(): boolean {
    return this.redis.status === "ready" && !this.lost;
  }

  /** Resolves once the first connection attempt has ended, or after `firstConnectMs`; at once after that. */
  async firstAttempt(): Promise<void> {
    if (!this.settled && !this.closed) await this.firstConnection();
  }

  /** Stops probing. */
  close(): void {
    this.closed = true;
    if (this.probe !== undefined) this.options.clock.clearTimeout(this.probe);
    this.probe = undefined;
  }

  private connectionLost(): void {
    if (this.closed) return;
    this.lost = true;
    this.options.onLost();
    this.probeConnection();
  }

  private probeConnection(): void {
    if (this.probe !== undefined || this.closed) return;
    this.probe = this.options.clock.setTimeout(() => {
      this.probe = undefined;
      if (!this.lost || this.closed) return;
      // A disconnected client comes back through "ready".
      if (this.redis.status !== "ready") return this.probeConnection();
      this.redis.ping().then(
        () => this.back(),
        () => this.probeConnection(),
      );
    }, this.options.probeIntervalMs);
  }

  private back(): void {
    if (this.probe !== undefined) this.options.clock.clearTimeout(this.probe);
    this.probe = undefined;
    const wasLost = this.lost;
    this.lost = false;
    this.options.onBack(wasLost);
  }

  /** Start-up: wait for the first connection a little; a first attempt that fails (refused, unknown host) is an outage. */
  private firstConnection(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.options.clock.clearTimeout(timer);
        this.redis.off("ready", done);
        this.redis.off("error", failedFirst);
        resolve();
      };
      const failedFirst = () => {
        this.settled = true;
        this.connectionLost();
        done();
      };
      const timer = this.options.clock.setTimeout(done, this.options.firstConnectMs);
      this.redis.once("ready", done);
      this.redis.once("error", failedFirst);
    });
  }
}
