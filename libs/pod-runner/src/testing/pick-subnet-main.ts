// Picks a subnet as a pod runner's `up` does, prints it, and holds it until stdin closes (subnet-claims.spec).
import { pickSubnet } from '../network.js';

const prefix = process.argv[2]!;
pickSubnet(prefix).then(
  (subnet) => {
    process.stdout.write(`${subnet}\n`);
    if (process.argv[3] === 'hold') process.stdin.on('end', () => process.exit(0)).resume();
  },
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  },
);
