// ESM-only dependencies (middy, fauxqs, valibot) are transformed to CommonJS by swc,
// so jest runs without --experimental-vm-modules.
const esmOnly = ['@middy', 'fauxqs', 'valibot', '@valibot', '@seriousme'];
const swc = [
  '@swc/jest',
  { jsc: { target: 'es2023', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } },
];

const base = {
  transform: { '^.+\\.(t|j|mj)s$': swc },
  transformIgnorePatterns: [`/node_modules/(?!(${esmOnly.join('|')})/)`],
  // These packages publish only an "import" export condition, which jest's resolver ignores.
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    '^@middy/([^/]+)$': '<rootDir>/node_modules/@middy/$1/index.js',
    '^fauxqs$': '<rootDir>/node_modules/fauxqs/dist/app.js',
  },
  testEnvironment: 'node',
};

module.exports = {
  // The longest files first, with or without jest's cache of the last run's durations.
  testSequencer: '<rootDir>/test/sequencer.cjs',
  // A directory per run for the service's log lines and queue messages, searched for the fixtures'
  // personal data at the end (test/run-logs.ts): a string found fails the run.
  globalSetup: '<rootDir>/test/run-setup.ts',
  globalTeardown: '<rootDir>/test/run-teardown.ts',
  projects: [
    {
      ...base,
      displayName: 'unit',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
      setupFiles: ['<rootDir>/test/unit/env.ts', '<rootDir>/test/quiet-output.ts'],
      // 20 s a test (test/unit/timeout.ts): jest ignores a project's `testTimeout`.
      setupFilesAfterEnv: ['<rootDir>/test/unit/timeout.ts'],
    },
    {
      ...base,
      displayName: 'cdk',
      testMatch: ['<rootDir>/test/cdk/**/*.test.ts'],
      setupFiles: ['<rootDir>/test/quiet-output.ts'],
    },
    {
      ...base,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      // The functions are bundled once for every runtime of the run (global-setup.ts).
      globalSetup: '<rootDir>/test/integration/global-setup.ts',
      globalTeardown: '<rootDir>/test/integration/global-teardown.ts',
      setupFiles: ['<rootDir>/test/integration/env.ts', '<rootDir>/test/quiet-output.ts'],
    },
  ],
};
