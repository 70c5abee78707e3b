// The Jest configuration README shows for a CommonJS project (Jest 30,
// ts-jest): test files run as ES modules, so that they can import
// dynamodb-lock. Run with NODE_OPTIONS=--experimental-vm-modules.
module.exports = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: { module: 'esnext', moduleResolution: 'bundler' } }],
  },
};
