/**
 * `dynamodb-lock/opentelemetry`: metrics and spans of lock clients through
 * the OpenTelemetry API (`@opentelemetry/api`, an optional peer dependency).
 */
export { LockClientInstrumentation, type AcquireOutcome, type LockClientInstrumentationOptions } from './instrumentation.js';
