import type { Redis } from "ioredis";
import { slotMaster } from "./key-slot.js";
import { StoreUnavailableError } from "./store-unavailable-error.js";
import type { Clock } from "../util/clock.js";
import { isReplyError, type RedisClient } from "./redis-connection.js";

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
   * waits out a failover): no request waits on Redis longer than this, and a cluster node that
   * fails stops being waited for after `failuresToDown` such bounds.
   */
  deadlineMs: number;
  clock: Pick<Clock, "setTimeout" | "clearTimeout">;
  events?: RedisGateEvents;
}

/** What the gate knows of one failing node: failures in a row, whether it counts as down, its probe. */
interface NodeHealth {
  failuresInARow: number;
  /** The gate's send count when the last failure that counted was seen: a failure counts only for a command sent after it. */
  countedAt: number;
  down: boolean;
  probe: unknown;
}

/** The node name of a single Redis or a Sentinel-watched master: there is one node. */
const ONLY_NODE = "redis";
/** In a cluster: a command no key routes (the client picks a node), or a slot whose owner is not known yet. */
const ANY_NODE = "cluster";

/**
 * Tells a Redis that is down from one that is slow (docs/architecture.md#redis-down-or-slow), per
 * node: one node for a single Redis or a Sentinel-watched master, each slot's master in a cluster.
 * While a node's connection is up, a command may take as long as the bound (a second by default: a
 * busy machine, a fork for `BGSAVE`, a failover); once the node is known to be unreachable —
 * failing `failuresToDown` times in a row — commands for its keys are not sent at all and fail at
 * once, so a node that is down costs requests nothing, while keys on the other masters are served
 * as before: a cluster master's failover holds only the answers that need its slots, each for one
 * bound at most. A lost connection is an outage of every node. A PING of the node every
 * `probeIntervalMs` ends its outage, and in a cluster so does the first slot map that hands its
 * slots to another node (a replica promoted). Every command of the adapter's stores goes through
 * one gate.
 */
export class RedisGate {
  private readonly nodes = new Map<string, NodeHealth>();
  /** Commands sent so far: a command's number orders its sending against answers and failures seen. */
  private sent = 0;
  /** Per node, the send count when it last answered: a command sent before that answer failing is a slow node, not a dead one. */
  private readonly lastAnswer = new Map<string, number>();
  /** The connection itself was lost (every node is out) until it is ready again, or a PING through it answers. */
  private lost = false;
  private lostProbe: unknown;
  /** What `available` said last, to report changes once. */
  private reported = true;
  /** Whether the first connection attempt has ended (connected, or failed): before that, commands wait for it. */
  private settled: boolean;
  private closed = false;
  /** Resolves the promise `nextAvailable` handed out, when Redis answers again. */
  private wake: (() => void) | undefined;
  private woken: Promise<void> | undefined;
  /** The cluster, when the connection is one: its slot map names each key's node. */
  private readonly cluster: ClusterView | null;

  constructor(
    readonly redis: RedisClient,
    private readonly options: RedisGateOptions,
  ) {
    this.cluster = isCluster(redis) ? (redis as unknown as ClusterView) : null;
    this.settled = redis.status === "ready";
    redis.on("ready", () => {
      this.settled = true;
      this.connectionBack();
    });
    // A lost connection is an outage at once: ioredis fails commands while it reconnects.
    redis.on("close", () => {
      if (this.settled) this.connectionLost();
    });
    // A cluster's new slot map may hand a down node's slots to another (a replica promoted): that ends
    // its outage at once, not at its next probe.
    if (this.cluster) redis.on("refresh", () => this.slotsMoved());
  }

  /**
   * Whether commands are sent now: connected, and some node is not failing in a row (for metrics,
   * logs and the rate limits; a command's own node is what `run` checks).
   */
  get available(): boolean {
    if (this.redis.status !== "ready" || this.lost) return false;
    if (this.cluster) return true;
    return !(this.nodes.get(ONLY_NODE)?.down ?? false);
  }

  /** Whether a command on `key` would be sent now (its node connected and not failing in a row). */
  availableFor(key: string | null): boolean {
    return this.redis.status === "ready" && !this.lost && !(this.nodes.get(this.nodeOf(key))?.down ?? false);
  }

  /**
   * Runs one command (or a batch on keys of one slot) on the connection, or fails at once when the
   * node that serves `key` is known to be unreachable. `key` is a key the command touches (its slot's
   * master answers it); null for a command any node answers.
   */
  async run<T>(key: string | null, command: (redis: RedisClient) => Promise<T>): Promise<T> {
    if (!this.settled && !this.closed) await this.firstConnection();
    const node = this.nodeOf(key);
    if (!this.availableFor(key)) throw new StoreUnavailableError("unreachable: the command was not sent");
    const started = performance.now();
    const onCommand = this.options.events?.onCommand;
    const number = ++this.sent;
    try {
      const result = await this.withinDeadline(command(this.redis));
      onCommand?.((performance.now() - started) / 1000, "answered");
      this.lastAnswer.set(node, this.sent);
      this.answered(node);
      return result;
    } catch (error) {
      // A reply error (a wrong type, a script error) is Redis answering: not an outage.
      const replied = isReplyError(error);
      onCommand?.((performance.now() - started) / 1000, replied ? "error" : "failed");
      if (replied) this.lastAnswer.set(node, this.sent);
      else this.failed(node, number);
      throw new StoreUnavailableError((error as Error).message, error);
    }
  }

  /** The node that answers commands on `key`: the one node, or the master of the key's slot as the client last learnt it. */
  private nodeOf(key: string | null): string {
    if (!this.cluster) return ONLY_NODE;
    if (key === null) return ANY_NODE;
    return slotMaster(this.cluster.slots, key) ?? ANY_NODE;
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

  /** Resolves when Redis, or one of its nodes, next turns from down to answering (never at once): a pending write's cue to try again. */
  nextAvailable(): Promise<void> {
    this.woken ??= new Promise<void>((resolve) => {
      this.wake = resolve;
    });
    return this.woken;
  }

  /** Stops probing and closes the connection. */
  close(): void {
    this.closed = true;
    for (const health of this.nodes.values()) this.stopProbing(health);
    if (this.lostProbe !== undefined) this.options.clock.clearTimeout(this.lostProbe);
    this.lostProbe = undefined;
    this.redis.disconnect();
  }

  /**
   * The connection closed: every node is out until it is ready again. A "close" can also come
   * after the "ready" of its replacement (a Sentinel failover), so a PING every `probeIntervalMs`
   * through a connection that says it is ready ends the outage too.
   */
  private connectionLost(): void {
    if (this.closed) return;
    this.lost = true;
    this.report();
    this.probeConnection();
  }

  private probeConnection(): void {
    if (this.lostProbe !== undefined || this.closed) return;
    this.lostProbe = this.options.clock.setTimeout(() => {
      this.lostProbe = undefined;
      if (!this.lost || this.closed) return;
      // A disconnected client comes back through "ready".
      if (this.redis.status !== "ready") return this.probeConnection();
      this.redis.ping().then(
        () => this.connectionBack(),
        () => this.probeConnection(),
      );
    }, this.options.probeIntervalMs);
  }

  /** The connection answers again: every node is given a fresh start. */
  private connectionBack(): void {
    if (this.lostProbe !== undefined) this.options.clock.clearTimeout(this.lostProbe);
    this.lostProbe = undefined;
    const wasLost = this.lost;
    this.lost = false;
    for (const name of [...this.nodes.keys()]) this.answered(name);
    if (wasLost) this.wakeWriters();
    this.report();
  }

  private answered(node: string): void {
    const health = this.nodes.get(node);
    if (!health) return;
    this.nodes.delete(node);
    this.stopProbing(health);
    if (health.down) this.recovered();
  }

  /**
   * Command `number` to `node` failed. It counts toward the node's outage only as new evidence: not
   * when the node has answered anything since it was sent (the node is alive, only slow: on a busy machine
   * a live master's answers come in batches near the bound while a failover goes on), and not when
   * it was sent before the last failure that counted was seen (commands in flight together that time
   * out together are one observation of one slow moment, not failures in a row). So a node is down
   * after `failuresToDown` bounds without an answer, one after another — what a dead node does.
   */
  private failed(node: string, number: number): void {
    if ((this.lastAnswer.get(node) ?? 0) >= number) return;
    let health = this.nodes.get(node);
    if (!health) {
      health = { failuresInARow: 0, countedAt: 0, down: false, probe: undefined };
      this.nodes.set(node, health);
    }
    if (number <= health.countedAt) return;
    health.countedAt = this.sent;
    health.failuresInARow += 1;
    if (health.down || health.failuresInARow < this.options.failuresToDown || this.closed) return;
    health.down = true;
    this.report();
    // In a cluster the other masters answer meanwhile: a node that merely missed two deadlines (a busy
    // moment) answers a PING at once and is back; a dead one is asked again every `probeIntervalMs`.
    this.scheduleProbe(node, health, this.cluster ? 0 : this.options.probeIntervalMs);
  }

  /** A node answers again: wake the writes waiting for that, and report. */
  private recovered(): void {
    this.wakeWriters();
    this.report();
  }

  /** Tells the events when `available` changed. */
  private report(): void {
    const available = this.available;
    if (available === this.reported || this.closed) return;
    this.reported = available;
    this.options.events?.onAvailability?.(available);
    if (available) this.wakeWriters();
  }

  private wakeWriters(): void {
    this.wake?.();
    this.wake = undefined;
    this.woken = undefined;
  }

  private scheduleProbe(node: string, health: NodeHealth, delayMs = this.options.probeIntervalMs): void {
    this.stopProbing(health);
    health.probe = this.options.clock.setTimeout(() => {
      health.probe = undefined;
      if (!health.down || this.closed || this.nodes.get(node) !== health) return;
      // Only a connected client can probe; a disconnected one comes back through "ready".
      if (this.redis.status !== "ready") return this.scheduleProbe(node, health);
      const target = this.probeTarget(node);
      if (!target) {
        // A cluster node that left the client's map: its slots are another node's now. A dead master's
        // connection leaves the client's pool before its slots leave the map: until they do, it stays down.
        if (!this.ownsSlots(node)) return this.answered(node);
        this.cluster?.refreshSlotsCache();
        return this.scheduleProbe(node, health);
      }
      target.ping().then(
        () => this.answered(node),
        () => {
          // A master that does not answer may have been replaced: learn the slots' owners again.
          this.cluster?.refreshSlotsCache();
          this.scheduleProbe(node, health);
        },
      );
    }, delayMs);
  }

  /** The client learnt the slot map again: every down node that owns no slot now is back (its slots are served elsewhere). */
  private slotsMoved(): void {
    for (const [node, health] of [...this.nodes]) if (health.down && !this.ownsSlots(node)) this.answered(node);
  }

  /** Whether the client's slot map still names `node` the master of some slot. */
  private ownsSlots(node: string): boolean {
    return node !== ANY_NODE && (this.cluster?.slots.some((owners) => owners?.[0] === node) ?? false);
  }

  /** What to PING to learn whether `node` answers again: the connection itself, or that cluster node's. */
  private probeTarget(node: string): Pick<Redis, "ping"> | undefined {
    if (!this.cluster || node === ANY_NODE) return this.redis;
    return this.cluster.nodes("master").find((candidate) => `${candidate.options.host}:${candidate.options.port}` === node);
  }

  private stopProbing(health: NodeHealth): void {
    if (health.probe === undefined) return;
    this.options.clock.clearTimeout(health.probe);
    health.probe = undefined;
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
        this.connectionLost();
        done();
      };
      const timer = this.options.clock.setTimeout(done, this.options.firstConnectMs);
      this.redis.once("ready", done);
      this.redis.once("error", failedFirst);
    });
  }
}

/** What the gate reads of a cluster client: the slot map (slot → node names, master first) and the master connections. */
interface ClusterView {
  slots: string[][];
  nodes(role: "master"): Redis[];
  refreshSlotsCache(): void;
}

function isCluster(redis: RedisClient): boolean {
  const view = redis as unknown as Partial<ClusterView>;
  return Array.isArray(view.slots) && typeof view.nodes === "function";
}
