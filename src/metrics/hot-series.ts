import { Counter, type Metric, type Registry } from "prom-client";

// The metrics every request touches, kept cheaply. prom-client hashes and validates the labels of
// every `inc` and `observe` (joining them into a key in sorted order): 2.8% of a chat completion's
// event loop for its five calls (docs/benchmarks.md#what-shaped-these-numbers). Here a series is
// found by its label values through one Map per label, in the order the metric names them, with no
// string built; the registry reads the same exposition prom-client writes.

/** A metric's series, one per combination of label values: Maps nested in the order of `labelNames`. */
class SeriesIndex<L extends string, S> {
  private readonly root = new Map<string, unknown>();
  readonly all: S[] = [];

  constructor(
    private readonly labelNames: readonly L[],
    private readonly create: (labels: Record<L, string>) => S,
  ) {}

  /** Forgets every series. */
  clear(): void {
    this.root.clear();
    this.all.length = 0;
  }

  of(labels: Readonly<Record<L, string>>): S {
    const { labelNames } = this;
    let level = this.root;
    const last = labelNames.length - 1;
    for (let index = 0; index < last; index += 1) {
      const value = labels[labelNames[index] as L];
      let next = level.get(value) as Map<string, unknown> | undefined;
      if (!next) {
        next = new Map();
        level.set(value, next);
      }
      level = next;
    }
    const value = last < 0 ? "" : labels[labelNames[last] as L];
    let series = level.get(value) as S | undefined;
    if (!series) {
      series = this.create(copyOf(labels, labelNames));
      level.set(value, series);
      this.all.push(series);
    }
    return series;
  }
}

/** The labels a series keeps: its own copy, of the metric's label names only, in their order. */
function copyOf<L extends string>(labels: Readonly<Record<L, string>>, labelNames: readonly L[]): Record<L, string> {
  const copy = {} as Record<L, string>;
  for (const name of labelNames) copy[name] = labels[name];
  return copy;
}

/** What both hot metrics are created with (prom-client's options, less what they do not support). */
export interface HotMetricOptions<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  registers: Registry[];
}

/** A prom-client counter whose `reset` (`Registry.resetMetrics`) also drops what its hot counter has not handed over yet. */
class ForgettingCounter<L extends string> extends Counter<L> {
  /** Unset while prom-client's constructor resets the new counter. */
  private readonly forget: (() => void) | undefined;

  constructor(forget: () => void, configuration: ConstructorParameters<typeof Counter<L>>[0]) {
    super(configuration);
    this.forget = forget;
  }

  override reset(): void {
    this.forget?.();
    super.reset();
  }
}

/** One series of a counter: what it counted since the registry last read it. */
interface CounterSeries<L extends string> {
  labels: Record<L, string>;
  pending: number;
}

/**
 * A counter for the serving path: counts per series in plain numbers, handed to its prom-client
 * `Counter` when the registry is read (its `collect`: one `inc` per series that moved), so that
 * scrapes, `get()` and the exposition are prom-client's own.
 */
export class HotCounter<L extends string> {
  private readonly series: SeriesIndex<L, CounterSeries<L>>;
  /** The prom-client counter the registry reads. */
  readonly metric: Counter<L>;

  constructor(options: HotMetricOptions<L>) {
    const series = new SeriesIndex<L, CounterSeries<L>>(options.labelNames, (labels) => ({ labels, pending: 0 }));
    this.series = series;
    this.metric = new ForgettingCounter<L>(() => series.clear(), {
      name: options.name,
      help: options.help,
      labelNames: options.labelNames,
      registers: options.registers,
      collect() {
        for (const entry of series.all) {
          if (entry.pending === 0) continue;
          this.inc(entry.labels, entry.pending);
          entry.pending = 0;
        }
      },
    });
  }

  inc(labels: Readonly<Record<L, string>>, value = 1): void {
    this.series.of(labels).pending += value;
  }
}

/** One value of a metric as the registry writes it: `metricName{labels,sharedLabels} value`. */
export interface ExposedValue {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName: string;
  exemplar: null | undefined;
}

/** A metric's values as prom-client's metrics hand them to the registry. */
export interface ExposedMetric {
  name: string;
  help: string;
  type: "histogram";
  values: ExposedValue[];
  aggregator: "sum";
}

/** One series of a histogram: a count per bucket (the last one past every bound), the sum and the count. */
interface HistogramSeries<L extends string> {
  labels: Record<L, string>;
  buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * A histogram for the serving path, registered as a metric of its own whose values are those
 * prom-client's `Histogram` gives the registry (cumulative `_bucket` lines with `le`, then `+Inf`,
 * `_sum` and `_count`), so that the exposition is the same (test/unit/metrics/hot-series.test.ts).
 */
export class HotHistogram<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = "histogram" as const;
  readonly aggregator = "sum" as const;
  private readonly upperBounds: readonly number[];
  private readonly series: SeriesIndex<L, HistogramSeries<L>>;

  constructor(options: HotMetricOptions<L> & { buckets: readonly number[] }) {
    this.name = options.name;
    this.help = options.help;
    this.upperBounds = [...options.buckets].sort((a, b) => a - b);
    const size = this.upperBounds.length + 1;
    const create = (labels: Record<L, string>) => ({ labels, buckets: new Float64Array(size), sum: 0, count: 0 });
    this.series = new SeriesIndex<L, HistogramSeries<L>>(options.labelNames, create);
    for (const registry of options.registers) registry.registerMetric(this as unknown as Metric);
  }

  /** Forgets every series, as prom-client's histogram does (`Registry.resetMetrics`). */
  reset(): void {
    this.series.clear();
  }

  observe(labels: Readonly<Record<L, string>>, value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const series = this.series.of(labels);
    const bounds = this.upperBounds;
    let bucket = 0;
    while (bucket < bounds.length && value > (bounds[bucket] as number)) bucket += 1;
    series.buckets[bucket] = (series.buckets[bucket] as number) + 1;
    series.sum += value;
    series.count += 1;
  }

  /** The values as prom-client's histogram hands them to the registry's text exposition. */
  async getForPromString(): Promise<ExposedMetric> {
    const values: ExposedValue[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const { labels, buckets, sum, count } of this.series.all) {
      let cumulative = 0;
      this.upperBounds.forEach((bound, index) => {
        cumulative += buckets[index] as number;
        values.push(valuePair({ le: bound }, cumulative, bucketName, labels, null));
      });
      values.push(valuePair({ le: "+Inf" }, count, bucketName, labels, null));
      values.push(valuePair({}, sum, `${this.name}_sum`, labels, undefined));
      values.push(valuePair({}, count, `${this.name}_count`, labels, undefined));
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The values with each series' labels spread into every value's, as prom-client's `get()` gives them. */
  async get(): Promise<ExposedMetric> {
    const data = await this.getForPromString();
    data.values = data.values.map(({ sharedLabels, ...rest }) => ({ ...rest, labels: { ...rest.labels, ...sharedLabels } }));
    return data;
  }
}

/**
 * One value as prom-client's histogram writes it: its own labels (`le`) apart from the series'
 * (`sharedLabels`); a bucket's exemplar is null (exemplars are off), a sum's or a count's unset.
 */
function valuePair(
  labels: Record<string, string | number>,
  value: number,
  metricName: string,
  sharedLabels: Record<string, string>,
  exemplar: null | undefined,
): ExposedValue {
  return { labels, sharedLabels, value, metricName, exemplar };
}
