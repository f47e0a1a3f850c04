import { executionAsyncResource } from "node:async_hooks";

/** One of Node's tick objects, held for as long as an adapter runs (`keepTickObjectShape`). */
export interface TickObjectHold {
  /** The tick object held: undefined until the tick it was taken from has run, and after `release`. */
  readonly tick: object | undefined;
  /** Lets the tick object go (the adapter closed). */
  release(): void;
}

/**
 * Keeps one of Node's `process.nextTick` tick objects alive, so that V8 keeps the hidden classes
 * (maps) that every tick object is built with, and `process.nextTick` stays on its fast path in a
 * process that has been idle.
 *
 * `process.nextTick` builds each tick object as an object literal with computed keys (Node's
 * `lib/internal/process/task_queues.js`). V8 records, per key, the map the object had when the key
 * was defined, and optimized code defines the key inline only while that record stands. The record
 * holds the map weakly. When a few full garbage collections in a row find no tick object alive (in
 * an idle process, or in a busy one at moments between ticks), the maps are collected. The next
 * tick object is built with new maps, which V8 takes for a second shape at that site: the record
 * becomes "megamorphic", for good. From then on every `process.nextTick` defines four of
 * its five properties through V8's runtime. An adapter traced at full sampling then cost about 10%
 * more CPU per request, side by side; untraced, too little to measure
 * (docs/benchmarks.md#what-shaped-these-numbers).
 *
 * A tick object held alive keeps its map, and so every map before it. It is taken, without any
 * async hook, as the resource of the tick that runs next (`executionAsyncResource`). It holds the
 * callback given here and the async context current when this is called.
 */
export function keepTickObjectShape(): TickObjectHold {
  const hold = {
    tick: undefined as object | undefined,
    release(): void {
      hold.tick = undefined;
    },
  };
  process.nextTick(() => {
    hold.tick = executionAsyncResource();
  });
  return hold;
}
