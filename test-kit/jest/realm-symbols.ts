/**
 * Jest 29 runs tests in vm contexts whose `Symbol` lacks `dispose` and
 * `asyncDispose` on Node 20 and 22 (the main realm has them). Test code uses
 * `await using`, so give the test realm the two symbols before any module loads.
 */
const symbols = Symbol as unknown as { dispose?: symbol; asyncDispose?: symbol };
symbols.dispose ??= Symbol('Symbol.dispose');
symbols.asyncDispose ??= Symbol('Symbol.asyncDispose');
