/**
 * Interleaves several async generators into one, yielding each value as soon as its source has
 * it, with the source's index. Pull-based: a source is asked for its next value only after its
 * previous one was taken, so a slow consumer slows the sources instead of buffering them. When
 * the consumer stops early or a source throws, the other sources are asked to return; the caller
 * aborts their signal so that a source waiting on it ends at once.
 */
export async function* mergeAsync<T>(sources: readonly AsyncGenerator<T>[]): AsyncGenerator<{ index: number; value: T }> {
  const pending = new Map<number, Promise<{ index: number; result: IteratorResult<T> }>>();
  const pull = (index: number) =>
    pending.set(
      index,
      (sources[index] as AsyncGenerator<T>).next().then((result) => ({ index, result })),
    );
  sources.forEach((_, index) => pull(index));
  try {
    while (pending.size > 0) {
      const { index, result } = await Promise.race(pending.values());
      if (result.done) {
        pending.delete(index);
        continue;
      }
      pull(index);
      yield { index, value: result.value };
    }
  } finally {
    // A source may be suspended inside a wait that only its abort signal ends, so its return()
    // is not awaited here (the caller aborts); late results and rejections are dropped.
    for (const [index, promise] of pending) {
      promise.catch(() => undefined);
      void (sources[index] as AsyncGenerator<T>).return(undefined).catch(() => undefined);
    }
  }
}
