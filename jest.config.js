// One Jest run over the whole workspace. The global setup starts throwaway
// redis-server and nats-server processes on free loopback ports and exports
// their addresses to the test workers through the environment.
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/libs', '<rootDir>/apps'],
  testMatch: ['**/src/**/*.spec.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
    ],
  },
  moduleNameMapper: {
    '^@ledgerline/([a-z-]+)$': '<rootDir>/libs/$1/src/index.ts',
    // Subpath entries (`/testing` for test support, `/info` of managed-ledger): src/<subpath>/index.ts.
    '^@ledgerline/([a-z-]+)/([a-z-]+)$': '<rootDir>/libs/$1/src/$2/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  modulePathIgnorePatterns: ['<rootDir>/dist/', '<rootDir>/.*/dist/'],
  globalSetup: '<rootDir>/libs/testing/src/jest-global-setup.ts',
  globalTeardown: '<rootDir>/libs/testing/src/jest-global-teardown.ts',
  testTimeout: 30000,
  maxWorkers: 2,
};
