// Runs the longest spec files first, so a run does not end with one worker
// finishing a long file while the other idles. Jest orders by the times of
// the last run; a fresh clone (CI) has none, and Jest's fallback, file size,
// puts a pod spec (a minute of injected faults in a short file) behind
// hundreds of unit files. A file with no recorded time gets its kind's
// estimate instead.
const Sequencer = require('@jest/test-sequencer').default;

/** [path pattern, estimated milliseconds]: the first that matches counts. */
const ESTIMATES_MS = [
  [/\/e2e\/pod-runner\/src\/pods-[^/]*\.spec\.ts$/, 60_000],
  [/\/e2e\/cluster-harness\/src\//, 30_000],
  // The web console at scale: 100,000 topics and a topic of 200,000 entries made, then a browser.
  [/\/apps\/cli\/src\/console-scale\.spec\.ts$/, 90_000],
  // The metadata store's conformance suites: short files (the cases live in src/testing/) that
  // page through 100,000 children and open 10,000 sessions per backend.
  [/\/libs\/metadata-store\/src\/[^/]*-store\.spec\.ts$/, 30_000],
  [/\/apps\/|\/libs\/cluster\/|\/redis-cluster[^/]*\.spec\.ts$|-process(es)?\.spec\.ts$/, 12_000],
];

/** A unit file's estimate from its size: about a second per 10 KB of spec. */
const MS_PER_BYTE = 0.1;

class LongestFirstSequencer extends Sequencer {
  time(test) {
    const recorded = super.time(test);
    if (recorded !== undefined) return recorded;
    const estimate = ESTIMATES_MS.find(([pattern]) => pattern.test(test.path));
    return estimate !== undefined ? estimate[1] : (test.context.hasteFS.getSize(test.path) ?? 0) * MS_PER_BYTE;
  }
}

module.exports = LongestFirstSequencer;
