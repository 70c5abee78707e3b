// Shared by every project (jest project configs don't inherit from the root).
const common = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  // Sources import './x.js' (NodeNext ESM); map those to the .ts files.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
  },
  testMatch: ['**/*.test.ts'],
  setupFiles: ['<rootDir>/test-kit/jest/realm-symbols.ts'],
};

// The projects against DynamoDB Local share one server: jest runs a global
// setup module once however many projects name it, and only if one of their
// tests was selected, so `npm test -- test/` doesn't start java.
const againstDynamoDBLocal = {
  ...common,
  roots: ['<rootDir>/integration'],
  globalSetup: '<rootDir>/test-kit/jest/global-setup.ts',
  globalTeardown: '<rootDir>/test-kit/jest/global-teardown.ts',
};

// Integration files that exercise the whole system rather than a behaviour
// that may differ by Node or SDK version: the packed package (which loads
// itself on every Node .ci/run passes in PACKAGE_TEST_NODES), the chaos runs,
// the examples and the demo. .ci/run runs them once, on the machine's Node.
export const endToEnd = [
  '<rootDir>/integration/package.test.ts',
  '<rootDir>/integration/chaos.test.ts',
  '<rootDir>/integration/chaos-load.test.ts',
  '<rootDir>/integration/examples.test.ts',
  '<rootDir>/integration/election/demo.test.ts',
];

// Files whose tests need the CPU on time: many held locks beside the same
// client's heavy traffic, where a host starved by other test files would lose
// locks to starvation, which the library does not promise to survive.
// JEST_APART=skip leaves them out, JEST_APART=only runs them and nothing
// else: `npm test` runs the rest, then these with the machine to themselves
// (test-kit/jest/apart-last.mjs); .ci/run does the same on every Node.
export const apart = [
  '<rootDir>/integration/heartbeat/',
  '<rootDir>/integration/acquire/far-region.test.ts',
  '<rootDir>/integration/acquire/many.test.ts',
  '<rootDir>/test/chaos/driver.test.ts',
];
const notApart = `^(?!${apart.map((path) => path.replace(/[.]/g, '\\.')).join('|')})`;
const ignoredByMode = { skip: apart, only: [notApart] };
const apartMode = process.env.JEST_APART || undefined;
if (apartMode !== undefined && !(apartMode in ignoredByMode))
  throw new Error(`JEST_APART must be skip or only, got ${JSON.stringify(apartMode)}`);
const ignored = ['/node_modules/', ...(apartMode === undefined ? [] : ignoredByMode[apartMode])];

/** @type {import('jest').Config} */
export default {
  // Global options (not per project). Most integration tests wait on real
  // leases rather than compute, so two files at a time fit a 2-core machine;
  // the timeout is generous enough for DynamoDB Local on a busy one.
  maxWorkers: 2,
  testTimeout: 60_000,
  projects: [
    { ...common, displayName: 'unit', roots: ['<rootDir>/test'], testPathIgnorePatterns: ignored },
    { ...againstDynamoDBLocal, displayName: 'integration', testPathIgnorePatterns: [...ignored, ...endToEnd] },
    { ...againstDynamoDBLocal, displayName: 'end-to-end', testMatch: endToEnd, testPathIgnorePatterns: ignored },
  ],
};
