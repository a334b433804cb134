// One Jest run over the whole workspace, in two tiers (Jest projects) that
// share one global setup: it starts throwaway redis-server and nats-server
// processes on free loopback ports and exports their addresses to the test
// workers through the environment.
//
// - fast: the libraries' specs: units and in-process integration against the
//   throwaway servers. What a developer runs on every change:
//   `npm run test:fast`.
// - system: what starts processes of its own: the apps' and the CLI's specs
//   (apps/, real Kafka clients included), the local process cluster
//   (libs/cluster), the test rig's failure and pod specs (e2e/), and the
//   libraries' specs that start a Redis Cluster or kill a worker process
//   (named redis-cluster*.spec.ts, *-process.spec.ts, *-processes.spec.ts).
//   `npm run test:system`.
//
// `npm test` runs both; `npx jest [paths] --selectProjects <tier>` one tier (paths first:
// --selectProjects takes every word after it as a project name).

/** Libraries' specs that start processes of their own: a Redis Cluster, or a worker to kill. */
const PROCESS_SPECS = ['/redis-cluster[^/]*\\.spec\\.ts$', '-process(es)?\\.spec\\.ts$'];

/** The tiers' shared settings: how TypeScript is compiled and packages resolved. */
const shared = {
  rootDir: __dirname,
  testEnvironment: '<rootDir>/libs/testing/src/leak-check-environment.ts',
  testMatch: ['**/src/**/*.spec.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
    ],
    // jose ships ES modules only; Jest loads CommonJS, so its files are compiled like ours.
    '/node_modules/jose/.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
  moduleNameMapper: {
    // The test rig's packages live under e2e/, every other package under libs/ (apps are never imported).
    // The console front-end imports the generated contracts by path (apps/console/web/vite.config.ts).
    '^@gen/(.+)$': '<rootDir>/libs/proto/src/gen/ledgerline/v1/$1.ts',
    '^@ledgerline/(pod-runner|cluster-harness)$': '<rootDir>/e2e/$1/src/index.ts',
    '^@ledgerline/(pod-runner|cluster-harness)/([a-z-]+)$': '<rootDir>/e2e/$1/src/$2/index.ts',
    '^@ledgerline/([a-z-]+)$': '<rootDir>/libs/$1/src/index.ts',
    // Subpath entries (`/testing` for test support): src/<subpath>/index.ts.
    '^@ledgerline/([a-z-]+)/([a-z-]+)$': '<rootDir>/libs/$1/src/$2/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  modulePathIgnorePatterns: ['<rootDir>/dist/', '<rootDir>/.*/dist/'],
};

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    {
      ...shared,
      displayName: 'fast',
      // The console front-end's pure helpers sit with its app; they start nothing.
      roots: ['<rootDir>/libs', '<rootDir>/apps/console/web'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/libs/cluster/', ...PROCESS_SPECS],
    },
    {
      ...shared,
      displayName: 'system',
      roots: ['<rootDir>/apps', '<rootDir>/e2e', '<rootDir>/libs'],
      testMatch: [
        '<rootDir>/apps/*/src/**/*.spec.ts',
        '<rootDir>/e2e/*/src/**/*.spec.ts',
        '<rootDir>/libs/cluster/src/**/*.spec.ts',
        '<rootDir>/libs/*/src/**/redis-cluster*.spec.ts',
        '<rootDir>/libs/*/src/**/*-process?(es).spec.ts',
      ],
    },
  ],
  // Longest files first, with estimates where no earlier run recorded a time (jest.sequencer.js).
  testSequencer: '<rootDir>/jest.sequencer.js',
  globalSetup: '<rootDir>/libs/testing/src/jest-global-setup.ts',
  globalTeardown: '<rootDir>/libs/testing/src/jest-global-teardown.ts',
  testTimeout: 30000,
  maxWorkers: 2,
  // A worker that ran many files holds a large heap (1.9 GB was seen), and every collection in it
  // is slower: the metadata store's 100,000-children conformance case took 69 s at the end of a
  // full run against 7 s alone. A worker above this after a file is replaced by a fresh one.
  workerIdleMemoryLimit: '1GB',
  // The environment fails a test file that leaves timers, sockets, servers or
  // child processes behind, naming them, so Jest's own end-of-run guess ("a
  // worker failed to exit gracefully") is no longer how leaks are found. What
  // is left for a worker after its last file is tearing down its heap, which
  // took 0.3-0.9 s on a busy two-core machine, past Jest's 500 ms default.
  workerGracefulExitTimeout: 5000,
};
