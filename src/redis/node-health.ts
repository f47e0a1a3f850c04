/** One failing node: failures in a row, whether it counts as down, and which failure counted last. */
interface Failing {
  inARow: number;
  /** The send number when the last failure that counted was seen: a failure counts only for a command sent after it. */
  countedAt: number;
  down: boolean;
}

/**
 * The rule that tells a Redis node that is down from one that is slow
 * (docs/architecture/redis.md#redis-down-or-slow), as a value with no I/O: the gate numbers each command
 * it sends and reports how it ended; this says when a node is down, and the gate stops sending to it
 * and probes it (a breaker after cockatiel's `ConsecutiveBreaker`, with the gate's PING as the
 * half-open trial). A failure counts only as new evidence, so a node is down after `failuresToDown`
 * bounds without an answer one after another, what a dead node does, and never for a slow moment.
 */
export class NodeHealth {
  /** Commands sent so far: a command's number orders its sending against answers and failures seen. */
  private sent = 0;
  /** Per node, the send number when it last answered. */
  private readonly lastAnswer = new Map<string, number>();
  private readonly failing = new Map<string, Failing>();

  constructor(private readonly failuresToDown: number) {}

  /** Numbers a command about to be sent. */
  send(): number {
    this.sent += 1;
    return this.sent;
  }

  /** Whether `node` counts as down: its commands are not sent. */
  isDown(node: string): boolean {
    return this.failing.get(node)?.down ?? false;
  }

  /** The nodes that count as down now. */
  downNodes(): string[] {
    return [...this.failing].filter(([, failing]) => failing.down).map(([node]) => node);
  }

  /**
   * `node` answered a command (or a probe): it starts afresh. Returns whether it was down, that
   * is whether it has just recovered.
   */
  answered(node: string): boolean {
    this.lastAnswer.set(node, this.sent);
    return this.forget(node);
  }

  /**
   * `node` answered with an error of Redis's own (a wrong type, a script error): alive, so a
   * command sent before now that fails later is a slow node, not a dead one; its failures in a row
   * stand, since it did not answer the command either.
   */
  replied(node: string): void {
    this.lastAnswer.set(node, this.sent);
  }

  /**
   * Command `number` to `node` failed (timed out, connection lost). It counts toward the node's
   * outage only as new evidence: not when the node has answered anything since it was sent (alive,
   * only slow: on a busy machine a live master's answers come in batches near the bound while a
   * failover goes on), and not when it was sent before the last failure that counted was seen
   * (commands in flight together that time out together are one observation of one slow moment).
   * Returns whether this failure takes the node down.
   */
  failed(node: string, number: number): boolean {
    if ((this.lastAnswer.get(node) ?? 0) >= number) return false;
    let failing = this.failing.get(node);
    if (!failing) {
      failing = { inARow: 0, countedAt: 0, down: false };
      this.failing.set(node, failing);
    }
    if (number <= failing.countedAt) return false;
    failing.countedAt = this.sent;
    failing.inARow += 1;
    if (failing.down || failing.inARow < this.failuresToDown) return false;
    failing.down = true;
    return true;
  }

  /**
   * `node` starts afresh without having answered (its slots are served by another node now, or
   * the connection came back). Returns whether it was down.
   */
  forget(node: string): boolean {
    const failing = this.failing.get(node);
    this.failing.delete(node);
    return failing?.down ?? false;
  }

  /** Every node starts afresh (the connection answers again). Returns the nodes that were down. */
  forgetAll(): string[] {
    const down = this.downNodes();
    this.failing.clear();
    return down;
  }
}
