/**
 * A real `@opentelemetry/sdk-metrics` reader that collects on demand, for
 * checking what the OpenTelemetry instrumentation recorded. Free of jest, so
 * a bundled child program can use it too.
 */
import { AggregationTemporality, MetricReader, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics';

export class TestMetricReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}

  /** Every data point of `name`, with its attributes. */
  async points(name: string): Promise<DataPoint<number | Histogram>[]> {
    const { resourceMetrics } = await this.collect();
    return resourceMetrics.scopeMetrics.flatMap((scope) =>
      scope.metrics.filter((m) => m.descriptor.name === name).flatMap((m) => m.dataPoints as DataPoint<number | Histogram>[]),
    );
  }

  /** The sum of `name`'s points whose attributes include `match`. */
  async sum(name: string, match: Record<string, unknown> = {}): Promise<number> {
    const points = await this.points(name);
    return points
      .filter((point) => Object.entries(match).every(([key, value]) => point.attributes[key] === value))
      .reduce((total, point) => total + (typeof point.value === 'number' ? point.value : point.value.count), 0);
  }

  /** The sum of `name`'s counter points by the value of one attribute, e.g. calls by `rpc.method`. */
  async sumsBy(name: string, attribute: string): Promise<Record<string, number>> {
    const sums: Record<string, number> = {};
    for (const point of await this.points(name)) {
      const key = String(point.attributes[attribute]);
      sums[key] = (sums[key] ?? 0) + (typeof point.value === 'number' ? point.value : point.value.count);
    }
    return sums;
  }
}
