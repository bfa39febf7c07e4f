const Sequencer = require('@jest/test-sequencer').default;

/**
 * The longest files first, in every run. Jest orders by the durations of the last run in its cache,
 * and without one (a fresh clone: CI) by file size, which would start the benchmarks, small files of
 * several minutes, last, with the other worker idle at the end. Files not listed keep jest's order
 * after these. Update the list when a file becomes one of the longest (the run's summary lists them).
 */
const LONGEST_FIRST = [
  'test/integration/crash.test.ts',
  'test/integration/benchmarks-seeded.test.ts',
  'test/integration/benchmarks.test.ts',
  'test/cdk/stack.test.ts',
  'test/integration/supplier-pace.test.ts',
  'test/integration/lists.test.ts',
  'test/integration/console.test.ts',
  'test/integration/every-job-ends.test.ts',
  'test/integration/recovery.test.ts',
];

class LongestFirst extends Sequencer {
  sort(tests) {
    const rank = (test) => {
      const at = LONGEST_FIRST.findIndex((path) => test.path.endsWith(path));
      return at < 0 ? LONGEST_FIRST.length : at;
    };
    return super
      .sort(tests)
      .map((test, order) => ({ test, order }))
      .sort((a, b) => rank(a.test) - rank(b.test) || a.order - b.order)
      .map(({ test }) => test);
  }
}

module.exports = LongestFirst;
