/**
 * The metric instruments of the instrumentation, made from one meter. Made
 * again only when the MeterProvider they would come from changes: with no
 * provider given, the global one is looked up at each recording, so metrics
 * arrive whether the application registers its MeterProvider before or after
 * it constructs the instrumentation (the API's global is not a proxy, unlike
 * its TracerProvider).
 */
import { metrics, type Counter, type Histogram, type Meter, type MeterProvider, type UpDownCounter } from '@opentelemetry/api';

/** The instrumentation scope: this package. */
export const SCOPE = 'dynamodb-lock';

export interface Instruments {
  readonly locksHeld: UpDownCounter;
  readonly acquisitions: Counter;
  readonly acquireDuration: Histogram;
  readonly heartbeats: Counter;
  readonly heartbeatLag: Histogram;
  readonly losses: Counter;
  readonly endangered: Counter;
  readonly dynamoDBCalls: Counter;
}

function createInstruments(meter: Meter): Instruments {
  return {
    locksHeld: meter.createUpDownCounter('dynamodb_lock.locks.held', { description: 'Locks this process holds', unit: '{lock}' }),
    acquisitions: meter.createCounter('dynamodb_lock.acquisitions', { description: 'Acquire calls, by outcome', unit: '{acquisition}' }),
    acquireDuration: meter.createHistogram('dynamodb_lock.acquire.duration', {
      description: 'How long acquire calls took, waiting included, by outcome',
      unit: 's',
    }),
    heartbeats: meter.createCounter('dynamodb_lock.heartbeats', {
      description: 'Background heartbeat attempts, by outcome',
      unit: '{heartbeat}',
    }),
    heartbeatLag: meter.createHistogram('dynamodb_lock.heartbeat.lag', {
      description: 'How late confirmed background heartbeats started after they were due',
      unit: 's',
    }),
    losses: meter.createCounter('dynamodb_lock.losses', {
      description: 'Locks lost, by kind: taken, deleted, released (by someone else) or expired',
      unit: '{lock}',
    }),
    endangered: meter.createCounter('dynamodb_lock.endangered', {
      description: 'Held locks whose background heartbeat failed since the last confirmed one',
      unit: '{lock}',
    }),
    dynamoDBCalls: meter.createCounter('dynamodb_lock.dynamodb.calls', {
      description: 'Calls sent to DynamoDB through wrapDynamoDB, by operation and outcome',
      unit: '{call}',
    }),
  };
}

/** The instruments of the given MeterProvider, or of whichever is global at the moment; cached per provider. */
export class LazyInstruments {
  readonly #meterProvider: MeterProvider | undefined;
  #made: { readonly provider: MeterProvider; readonly instruments: Instruments } | undefined;

  constructor(meterProvider: MeterProvider | undefined) {
    this.#meterProvider = meterProvider;
  }

  get current(): Instruments {
    const provider = this.#meterProvider ?? metrics.getMeterProvider();
    if (this.#made?.provider !== provider) this.#made = { provider, instruments: createInstruments(provider.getMeter(SCOPE)) };
    return this.#made.instruments;
  }
}
