import type { Clock } from "../util/clock.js";
import { ConnectionWatch } from "./connection-watch.js";
import { ANY_NODE, type ClusterView, clusterViewOf, type MasterConnection, masterConnection, nodeOfKey, ownsSlots } from "./cluster-view.js";
import { NodeHealth } from "./node-health.js";
import { isReplyError, type RedisClient } from "./redis-connection.js";
import { StoreUnavailableError } from "./store-unavailable-error.js";
import { errorMessage } from "../util/error-message.js";

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
  /** The connection's slot map: by default the connection itself when it is a Cluster (`clusterViewOf`); a test gives its own. */
  cluster?: ClusterView | null;
}

/** The node name of a single Redis or a Sentinel-watched master: there is one node. */
const ONLY_NODE = "redis";

/**
 * Tells a Redis that is down from one that is slow (docs/architecture/redis.md#redis-down-or-slow), per
 * node: one for a single Redis or a Sentinel-watched master, each slot's master in a cluster. A
 * command may take as long as the bound while its node is up; once the node counts as down
 * (`NodeHealth`, or a lost connection: `ConnectionWatch`) its commands fail at once without being
 * sent, until a PING of the node answers or (in a cluster) a slot map hands its slots to another
 * node. Every command of the adapter's stores goes through one gate.
 */
export class RedisGate {
  /** Which nodes count as down, from how the commands sent to them ended. */
  private readonly health: NodeHealth;
  /** The PING timer of each node that is down. */
  private readonly probes = new Map<string, unknown>();
  /** Whether the connection itself is up: a lost one is an outage of every node. */
  private readonly connection: ConnectionWatch;
  /** What `available` said last, to report changes once. */
  private reported = true;
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
    this.health = new NodeHealth(options.failuresToDown);
    this.cluster = options.cluster === undefined ? clusterViewOf(redis) : options.cluster;
    this.connection = new ConnectionWatch(redis, {
      ...options,
      onLost: () => this.report(),
      onBack: (wasLost) => this.connectionBack(wasLost),
    });
    // A cluster's new slot map may hand a down node's slots to another (a replica promoted): that ends
    // its outage at once, not at its next probe.
    this.cluster?.on("refresh", () => this.slotsMoved());
  }

  /**
   * Whether commands are sent now: connected, and some node is not failing in a row (for metrics,
   * logs and the rate limits; a command's own node is what `run` checks).
   */
  get available(): boolean {
    if (!this.connection.up) return false;
    return this.cluster !== null || !this.health.isDown(ONLY_NODE);
  }

  /** Whether a command on `key` would be sent now (its node connected and not failing in a row). */
  availableFor(key: string | null): boolean {
    return this.sendsTo(this.nodeOf(key));
  }

  /**
   * Runs one command (or a batch on keys of one slot) on the connection, or fails at once when the
   * node that serves `key` is known to be unreachable. `key` is a key the command touches (its slot's
   * master answers it); null for a command any node answers.
   */
  async run<T>(key: string | null, command: (redis: RedisClient) => Promise<T>): Promise<T> {
    await this.connection.firstAttempt();
    const node = this.nodeOf(key);
    if (!this.sendsTo(node)) throw new StoreUnavailableError("unreachable: the command was not sent");
    const started = performance.now();
    const onCommand = this.options.events?.onCommand;
    const number = this.health.send();
    try {
      const result = await withinDeadline(command(this.redis), this.options);
      onCommand?.((performance.now() - started) / 1000, "answered");
      if (this.health.answered(node)) this.nodeBack(node);
      return result;
    } catch (error) {
      // A reply error (a wrong type, a script error) is Redis answering: not an outage.
      const replied = isReplyError(error);
      onCommand?.((performance.now() - started) / 1000, replied ? "error" : "failed");
      if (replied) this.health.replied(node);
      else if (this.health.failed(node, number) && !this.closed) this.nodeDown(node);
      throw new StoreUnavailableError(errorMessage(error), error);
    }
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
    for (const node of [...this.probes.keys()]) this.stopProbing(node);
    this.connection.close();
    this.redis.disconnect();
  }

  /** The node that answers commands on `key`: the one node, or the master of the key's slot as the client last learnt it. */
  private nodeOf(key: string | null): string {
    return this.cluster ? nodeOfKey(this.cluster, key) : ONLY_NODE;
  }

  private sendsTo(node: string): boolean {
    return this.connection.up && !this.health.isDown(node);
  }

  /** The connection answers again: every node is given a fresh start. */
  private connectionBack(wasLost: boolean): void {
    const wereDown = this.health.forgetAll();
    for (const node of wereDown) this.stopProbing(node);
    if (wasLost || wereDown.length > 0) this.wakeWriters();
    this.report();
  }

  /**
   * `node` has just counted as down: report it, and PING it until it answers. In a cluster the
   * other masters answer meanwhile: a node that merely missed two deadlines (a busy moment) answers
   * a PING at once and is back; a dead one is asked again every `probeIntervalMs`.
   */
  private nodeDown(node: string): void {
    this.report();
    this.scheduleProbe(node, this.cluster ? 0 : this.options.probeIntervalMs);
  }

  /** A node that was down is back: stop probing it, wake the writes waiting for that, and report. */
  private nodeBack(node: string): void {
    this.stopProbing(node);
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

  private scheduleProbe(node: string, delayMs = this.options.probeIntervalMs): void {
    this.stopProbing(node);
    this.probes.set(node, this.options.clock.setTimeout(() => {
      this.probes.delete(node);
      if (!this.health.isDown(node) || this.closed) return;
      // Only a connected client can probe; a disconnected one comes back through "ready".
      if (this.redis.status !== "ready") return this.scheduleProbe(node);
      const target = this.probeTarget(node);
      if (!target) {
        // A cluster node that left the client's map: its slots are another node's now. A dead master's
        // connection leaves the client's pool before its slots leave the map: until they do, it stays down.
        if (this.cluster && !ownsSlots(this.cluster, node)) return this.forgotten(node);
        this.cluster?.refreshSlotsCache();
        return this.scheduleProbe(node);
      }
      target.ping().then(
        () => {
          if (this.health.answered(node)) this.nodeBack(node);
        },
        () => {
          // A master that does not answer may have been replaced: learn the slots' owners again.
          this.cluster?.refreshSlotsCache();
          this.scheduleProbe(node);
        },
      );
    }, delayMs));
  }

  /** The client learnt the slot map again: every down node that owns no slot now is back (its slots are served elsewhere). */
  private slotsMoved(): void {
    const cluster = this.cluster;
    if (!cluster) return;
    for (const node of this.health.downNodes()) if (!ownsSlots(cluster, node)) this.forgotten(node);
  }

  /** A down node whose slots are another's now: it starts afresh. */
  private forgotten(node: string): void {
    if (this.health.forget(node)) this.nodeBack(node);
  }

  /** What to PING to learn whether `node` answers again: the connection itself, or that cluster node's. */
  private probeTarget(node: string): Pick<MasterConnection, "ping"> | undefined {
    if (!this.cluster || node === ANY_NODE) return this.redis;
    return masterConnection(this.cluster, node);
  }

  private stopProbing(node: string): void {
    const probe = this.probes.get(node);
    if (probe === undefined) return;
    this.options.clock.clearTimeout(probe);
    this.probes.delete(node);
  }
}

/** A command's result, or a timeout once the deadline has passed (the command may still finish; nothing waits for it). */
function withinDeadline<T>(pending: Promise<T>, { clock, deadlineMs }: Pick<RedisGateOptions, "clock" | "deadlineMs">): Promise<T> {
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
