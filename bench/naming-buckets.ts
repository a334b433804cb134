// Throughput of the PIP-157 naming functions: how many bucket computations,
// persistence names and parsed persistence names per second, for local names
// of a few lengths. Run: npx tsx bench/naming-buckets.ts [--full]
// The default finishes in a few seconds; --full measures longer for steadier figures.
import { TopicName, managedLedgerPath, parsePersistenceName, persistenceName, topicBucket } from '@ledgerline/naming';

const full = process.argv.includes('--full');
const measureMs = full ? 2000 : 300;
const NAME_LENGTHS = [8, 32, 128, 512];
const BUCKETS = 1024;
const NAMES_PER_LENGTH = 1000;
const MAX_ROUNDS = 1_000_000;

// Names mix ASCII with a few characters that need encoding, like real topic names.
function makeNames(length: number): string[] {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789-_. $é';
  return Array.from({ length: NAMES_PER_LENGTH }, (_, seed) => {
    let name = '';
    let state = seed * 2654435761 + length;
    for (let index = 0; index < length; index++) {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      name += alphabet[state % alphabet.length];
    }
    return name;
  });
}

// Runs `operation` over all inputs repeatedly for about measureMs (bounded by MAX_ROUNDS rounds) and returns operations per second.
function opsPerSecond<T>(inputs: T[], operation: (input: T) => unknown): number {
  // A few untimed passes first, so that the figures are for optimised code.
  for (let pass = 0; pass < 3; pass++) inputs.forEach(operation);
  let sink = 0;
  let operations = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(measureMs) * 1_000_000n;
  for (let round = 0; round < MAX_ROUNDS && process.hrtime.bigint() < deadline; round++) {
    for (const input of inputs) {
      const result = operation(input);
      sink += typeof result === 'number' ? result : 1;
    }
    operations += inputs.length;
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (sink < 0) console.log(sink);
  return operations / seconds;
}

function format(rate: number): string {
  return `${(rate / 1e6).toFixed(2)} M/s`;
}

const rows = NAME_LENGTHS.map((length) => {
  const locals = makeNames(length);
  const topics = locals.map((local) => TopicName.parse(`persistent://tenant/namespace/${local}`));
  const paths = topics.map((topic) => managedLedgerPath(topic, BUCKETS));
  return {
    'local name length': length,
    topicBucket: format(opsPerSecond(locals, (local) => topicBucket(local, BUCKETS))),
    'persistenceName (n=1)': format(opsPerSecond(topics, (topic) => persistenceName(topic, 1))),
    [`persistenceName (n=${BUCKETS})`]: format(opsPerSecond(topics, (topic) => persistenceName(topic, BUCKETS))),
    'TopicName.parse': format(opsPerSecond(topics, (topic) => TopicName.parse(topic.toString()))),
    [`parsePersistenceName (n=${BUCKETS})`]: format(opsPerSecond(paths, (path) => parsePersistenceName(path, BUCKETS))),
  };
});

console.log(
  `naming throughput, ${NAMES_PER_LENGTH} distinct names per length, ${measureMs} ms per cell${full ? ' (--full)' : ''}`,
);
console.table(rows);
