/**
 * The logger the client writes to: only the methods it calls, so that pino,
 * `console` or any logger with these methods fits without this package
 * depending on one.
 */

/** What the client calls on a logger. pino's loggers and `console` both fit. */
export interface Logger {
  /** Details first (pino's convention), then the message. */
  debug(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
  /**
   * A logger that adds `bindings` to every line, as pino's `child` does.
   * Optional: without it (as with `console`) the bindings are added to each
   * call's details instead.
   */
  child?(bindings: Record<string, unknown>): Logger;
}

/**
 * `logger` with `bindings` on every line, through its own `child` when it
 * has one. Its methods never throw: the client logs from its background
 * heartbeats and in the middle of a lock's end, where a logger's failure
 * would otherwise stop a loss from being told or escape as an unhandled
 * rejection.
 */
export function loggerWithBindings(logger: Logger | undefined, bindings: Record<string, unknown>): Logger | undefined {
  if (logger === undefined) return undefined;
  if (typeof logger.child === 'function') return neverThrowing(logger.child(bindings));
  return neverThrowing({
    debug: (details, message) => logger.debug({ ...bindings, ...details }, message),
    warn: (details, message) => logger.warn({ ...bindings, ...details }, message),
    error: (details, message) => logger.error({ ...bindings, ...details }, message),
  });
}

function neverThrowing(logger: Logger): Logger {
  const quietly =
    (level: 'debug' | 'warn' | 'error') =>
    (details: object, message: string): void => {
      try {
        logger[level](details, message);
      } catch {
        // A log line is not worth a lock: the line is lost, the client goes on.
      }
    };
  return { debug: quietly('debug'), warn: quietly('warn'), error: quietly('error') };
}
