// A Prometheus counter counted in plain numbers, registered in a prom-client Registry as a
// custom metric (an object with get(), as call-histogram.ts is). Guarantees: the hot path
// adds to a series' `n` — no label hashing, no allocation; a series made before the first
// scrape shows as 0; the exposition is what prom-client's Counter writes for the same counts.

export interface CounterSeries {
  n: number;
}

interface Series extends CounterSeries {
  readonly labels: Readonly<Record<string, string>>;
}

export class CounterFamily {
  readonly type = 'counter';
  /** How /metrics of `server.workers` merges the workers' series: summed, or the highest (a count every worker keeps alike). */
  readonly aggregator: 'sum' | 'max';
  readonly #series: Series[] = [];

  constructor(readonly name: string, readonly help: string, aggregator: 'sum' | 'max' = 'sum') {
    this.aggregator = aggregator;
  }

  /** A new series with these labels (the caller keeps it; one per label set). */
  series(labels: Record<string, string>): CounterSeries {
    const s: Series = { labels: Object.freeze({ ...labels }), n: 0 };
    this.#series.push(s);
    return s;
  }

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: { labels: Readonly<Record<string, string>>; value: number }[] }> {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.#series.map((s) => ({ labels: s.labels, value: s.n })) };
  }
}
