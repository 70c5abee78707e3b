// Shared by both projects (jest project configs don't inherit from the root).
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

/** @type {import('jest').Config} */
export default {
  // Global option (not per project): generous enough for integration tests
  // against DynamoDB Local on a busy 2-core machine.
  testTimeout: 60_000,
  projects: [
    { ...common, displayName: 'unit', roots: ['<rootDir>/test'] },
    {
      ...common,
      displayName: 'integration',
      roots: ['<rootDir>/integration'],
      // jest runs a project's globalSetup/Teardown only if one of its tests is
      // selected, so `npm test -- test/` doesn't start DynamoDB Local.
      globalSetup: '<rootDir>/test-kit/jest/global-setup.ts',
      globalTeardown: '<rootDir>/test-kit/jest/global-teardown.ts',
    },
  ],
};
