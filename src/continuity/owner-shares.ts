/**
 * Which keys of a bounded map each owner holds, in order, and who holds the most
 * (docs/architecture.md#continuity): what lets a full map push out the oldest entry of its largest
 * holder rather than the oldest of all, so that one principal writing without end evicts its own
 * entries and never another's. Every operation is O(1): owners are kept in buckets by how many
 * keys they hold, and a count moves by one at a time.
 */
export class OwnerShares {
  /** Each owner's keys, oldest (or least recently used) first. */
  private readonly keysOf = new Map<string, Set<string>>();
  /** The owners holding each number of keys, in the order they reached it. */
  private readonly holding = new Map<number, Set<string>>();
  private largest = 0;

  /** Counts `key` as `owner`'s newest. */
  add(owner: string, key: string): void {
    const keys = this.keysOf.get(owner) ?? new Set<string>();
    if (keys.size === 0) this.keysOf.set(owner, keys);
    keys.add(key);
    this.move(owner, keys.size - 1, keys.size);
  }

  /** Takes `key` out of `owner`'s keys. */
  remove(owner: string, key: string): void {
    const keys = this.keysOf.get(owner);
    if (!keys?.delete(key)) return;
    if (keys.size === 0) this.keysOf.delete(owner);
    this.move(owner, keys.size + 1, keys.size);
  }

  /** Makes `key` its owner's most recently used. */
  touch(owner: string, key: string): void {
    const keys = this.keysOf.get(owner);
    if (!keys?.delete(key)) return;
    keys.add(key);
  }

  /** The oldest key of the owner holding the most (of those tied, the one that got there first); undefined when none is held. */
  nextToGo(): string | undefined {
    const owner = this.holding.get(this.largest)?.values().next().value;
    return owner === undefined ? undefined : this.keysOf.get(owner)?.values().next().value;
  }

  private move(owner: string, from: number, to: number): void {
    const before = this.holding.get(from);
    if (before) {
      before.delete(owner);
      if (before.size === 0) this.holding.delete(from);
    }
    if (to > 0) {
      const after = this.holding.get(to) ?? new Set<string>();
      if (after.size === 0) this.holding.set(to, after);
      after.add(owner);
    }
    // A count moves by one: when the largest bucket empties, its owner went one below.
    if (to > this.largest) this.largest = to;
    else if (from === this.largest && !this.holding.has(from)) this.largest = to;
  }
}
