import { StoreUnavailableError } from "./store-unavailable-error.js";
import type { Clock } from "../util/clock.js";
import type { RedisClient } from "./redis-connection.js";

/** What the gate reports, for logs and metrics. */
export interface RedisGateEvents {
  onAvailability?: (available: boolean) => void;
  /** A command sent, how long it took, and how it ended: answered, answered with an error (`CROSSSLOT`, `WRONGTYPE`), or failed (timed out, connection lost). */
  onCommand?: (seconds: number, outcome: "answered" | "error" | "failed") => void;
}

/** Settings of the gate. */
export interface RedisGateOptions {
  /** Commands failing one after another before Redis counts as down (skipped at once until a probe answers). */
  failuresToDown: number;
  /** How often a Redis that is down is probed with a PING. */
  probeIntervalMs: number;
  /** How long a command may wait for the first connection of all (start-up), at most. */
  firstConnectMs: number;
  /**
   * Bound on one `run`, however the client retries inside it (a cluster follows redirections and
   * waits out a failover): no request waits on Redis longer than this.
   */
  deadlineMs: number;
  clock: Pick<Clock, "setTimeout" | "clearTimeout">;
  events?: RedisGateEvents;
}

/**
 * Tells a Redis that is down from one that is slow (docs/architecture.md#redis-down-or-slow). While
 * the connection is up, a command may take as long as the connection's command timeout (a second by
 * default: a busy machine, a fork for `BGSAVE`, a failover); while Redis is known to be unreachable —
 * not connected, or failing `failuresToDown` times in a row — commands are not sent at all and fail
 * at once, so a Redis that is down costs requests nothing. A PING every `probeIntervalMs` (and any
 * reconnect) ends the outage. Every command of the adapter's stores goes through one gate.
 */
export class RedisGate {
  private failuresInARow = 0;
  private down = false;
  /** Whether the first connection attempt has ended (connected, or failed): before that, commands wait for it. */
  private settled: boolean;
  private probe: unknown;
  private closed = false;
  /** Resolves the promise `nextAvailable` handed out, when Redis answers again. */
  private wake: (() => void) | undefined;
  private woken: Promise<void> | undefined;

  constructor(
    readonly redis: RedisClient,
    private readonly options: RedisGateOptions,
  ) {
    this.settled = redis.status === "ready";
    redis.on("ready", () => {
      this.settled = true;
      this.answered();
    });
    // A lost connection is an outage at once: ioredis fails commands while it reconnects.
    redis.on("close", () => {
      if (this.settled) this.setDown(true);
    });
  }

  /** Whether commands are sent now: connected, and not failing in a row. */
  get available(): boolean {
    return this.redis.status === "ready" && !this.down;
  }

  /** Runs one command (or a batch) on the connection, or fails at once when Redis is known to be unreachable. */
  async run<T>(command: (redis: RedisClient) => Promise<T>): Promise<T> {
    if (!this.settled && !this.closed) await this.firstConnection();
    if (!this.available) throw new StoreUnavailableError("unreachable: the command was not sent");
    const started = performance.now();
    const onCommand = this.options.events?.onCommand;
    try {
      const result = await this.withinDeadline(command(this.redis));
      onCommand?.((performance.now() - started) / 1000, "answered");
      this.answered();
      return result;
    } catch (error) {
      // A reply error (a wrong type, a script error) is Redis answering: not an outage.
      const replied = isReplyError(error);
      onCommand?.((performance.now() - started) / 1000, replied ? "error" : "failed");
      if (!replied) this.failed();
      throw new StoreUnavailableError((error as Error).message, error);
    }
  }

  /** The command's result, or a timeout once the deadline has passed (the command may still finish; nothing waits for it). */
  private withinDeadline<T>(pending: Promise<T>): Promise<T> {
    const { clock, deadlineMs } = this.options;
    return new Promise<T>((resolve, reject) => {
      const timer = clock.setTimeout(() => reject(new Error(`no answer within ${deadlineMs} ms`)), deadlineMs);
      pending.then(
        (value) => {
          clock.clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clock.clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  /** Resolves when Redis next turns from down to answering (never at once): a pending write's cue to try again. */
  nextAvailable(): Promise<void> {
    this.woken ??= new Promise<void>((resolve) => {
      this.wake = resolve;
    });
    return this.woken;
  }

  /** Stops probing and closes the connection. */
  close(): void {
    this.closed = true;
    this.stopProbing();
    this.redis.disconnect();
  }

  private answered(): void {
    this.failuresInARow = 0;
    this.setDown(false);
  }

  private failed(): void {
    this.failuresInARow += 1;
    if (this.failuresInARow >= this.options.failuresToDown) this.setDown(true);
  }

  private setDown(down: boolean): void {
    if (this.down === down || this.closed) return;
    this.down = down;
    this.options.events?.onAvailability?.(!down);
    if (down) {
      this.scheduleProbe();
      return;
    }
    this.stopProbing();
    this.wake?.();
    this.wake = undefined;
    this.woken = undefined;
  }

  private scheduleProbe(): void {
    this.stopProbing();
    this.probe = this.options.clock.setTimeout(() => {
      this.probe = undefined;
      if (!this.down || this.closed) return;
      // Only a connected Redis can be probed; a disconnected one comes back through "ready".
      if (this.redis.status !== "ready") return this.scheduleProbe();
      this.redis.ping().then(
        () => this.answered(),
        () => this.scheduleProbe(),
      );
    }, this.options.probeIntervalMs);
  }

  private stopProbing(): void {
    if (this.probe === undefined) return;
    this.options.clock.clearTimeout(this.probe);
    this.probe = undefined;
  }

  /** Start-up: the first connection is not an outage yet; wait for it a little. */
  private firstConnection(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.options.clock.clearTimeout(timer);
        this.redis.off("ready", done);
        this.redis.off("error", failedFirst);
        resolve();
      };
      // A first attempt that fails (refused, unknown host) is an outage: stop waiting.
      const failedFirst = () => {
        this.settled = true;
        this.setDown(true);
        done();
      };
      const timer = this.options.clock.setTimeout(done, this.options.firstConnectMs);
      this.redis.once("ready", done);
      this.redis.once("error", failedFirst);
    });
  }
}

function isReplyError(error: unknown): boolean {
  return error instanceof Error && error.name === "ReplyError";
}
