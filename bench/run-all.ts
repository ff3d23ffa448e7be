// Runs every benchmark, each in its own process (the card rig is one per process), in order.
// `npm run bench` runs all; `npm run bench -- ping card` runs those whose name contains a word.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const benchmarks = [
  'ping-throughput.ts',
  'card-latency.ts',
  'idle-cpu.ts',
  'ledger-throughput.ts',
  'standalone-footprint.ts',
  'slow-link.ts',
  'float-recharge.ts',
  'float-reports.ts',
];
const wanted = process.argv.slice(2);
for (const file of benchmarks) {
  if (wanted.length > 0 && !wanted.some((word) => file.includes(word))) continue;
  console.log(`\n## ${file}\n`);
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL(file, import.meta.url))],
    {
      stdio: 'inherit',
    },
  );
  if (result.status !== 0) console.log(`(${file} exited with ${result.status})`);
}
