// A Prometheus histogram for the hot path, registered in a prom-client Registry as a
// custom metric (an object with get(), as prom-client's own metrics are). Guarantees:
// observe() on a series is a bucket search and three number updates — no label object,
// no hashing, no allocation; the exposition (buckets cumulative with `le`, +Inf, _sum,
// _count per series) is what prom-client's Histogram writes for the same observations.

export interface HistogramSeries {
  observe(value: number): void;
}

interface Series extends HistogramSeries {
  readonly labels: Readonly<Record<string, string>>;
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

export class CallHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #bounds: readonly number[];
  readonly #series: Series[] = [];

  /** Registered by its owner (registry.registerMetric), when the registry is made. */
  constructor(readonly name: string, readonly help: string, buckets: readonly number[]) {
    this.#bounds = [...buckets].sort((a, b) => a - b);
  }

  /** A new series with these labels (the caller keeps it; one per label set). */
  series(labels: Record<string, string>): HistogramSeries {
    const bounds = this.#bounds;
    const s: Series = {
      labels: Object.freeze({ ...labels }),
      counts: new Float64Array(bounds.length),
      sum: 0,
      count: 0,
      observe(v) {
        s.sum += v;
        s.count++;
        for (let i = 0; i < bounds.length; i++) {
          if (v <= bounds[i]!) {
            s.counts[i]!++;
            return;
          }
        }
      },
    };
    this.#series.push(s);
    return s;
  }

  /** Zeroes every series (prom-client's Registry.resetMetrics). */
  reset(): void {
    for (const s of this.#series) {
      s.counts.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: { labels: Record<string, string | number>; value: number; metricName: string }[] }> {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const s of this.#series) {
      let acc = 0;
      for (let i = 0; i < this.#bounds.length; i++) {
        acc += s.counts[i]!;
        values.push({ labels: { le: this.#bounds[i]!, ...s.labels }, value: acc, metricName: `${this.name}_bucket` });
      }
      values.push({ labels: { le: '+Inf', ...s.labels }, value: s.count, metricName: `${this.name}_bucket` });
      values.push({ labels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
