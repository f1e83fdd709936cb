/**
 * `npm test`: every check CI runs, in order, with one closing summary line.
 *   proto drift -> lint -> typecheck -> unit + integration (vitest, real PostgreSQL and Redis)
 *   -> console build -> e2e (Chromium, JavaScript on and off) -> relay smoke test under Deno.
 * Flags: --only=<step,step> runs a subset (steps: proto, lint, typecheck, unit, build, e2e, deno).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name: string) => path.join(root, 'node_modules/.bin', name);
const only = process.argv
  .find((a) => a.startsWith('--only='))
  ?.slice(7)
  .split(',');
const out = mkdtempSync(path.join(tmpdir(), 'switchyard-test-'));

process.env.TEST_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
process.env.TEST_REDIS_URL ??= 'redis://127.0.0.1:6379';

type Counts = { passed: number; failed: number; skipped: number };
const total: Counts = { passed: 0, failed: 0, skipped: 0 };
const failures: string[] = [];

function exec(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const tee = (stream: NodeJS.WriteStream) => (chunk: Buffer) => {
      output += chunk.toString();
      stream.write(chunk);
    };
    child.stdout.on('data', tee(process.stdout));
    child.stderr.on('data', tee(process.stderr));
    child.on('exit', (code) => resolve({ code: code ?? 1, output }));
  });
}

function vitestCounts(file: string): Counts {
  const r = JSON.parse(readFileSync(file, 'utf8')) as {
    numPassedTests: number;
    numFailedTests: number;
    numPendingTests: number;
    numTodoTests: number;
  };
  return { passed: r.numPassedTests, failed: r.numFailedTests, skipped: r.numPendingTests + r.numTodoTests };
}

const steps: { name: string; run: () => Promise<boolean> }[] = [
  { name: 'proto', run: async () => (await exec('npm', ['run', '--silent', 'proto:check'])).code === 0 },
  { name: 'lint', run: async () => (await exec(bin('biome'), ['check', '.'])).code === 0 },
  { name: 'typecheck', run: async () => (await exec(bin('tsc'), ['--noEmit', '-p', '.'])).code === 0 },
  {
    name: 'unit',
    run: async () => {
      const json = path.join(out, 'unit.json');
      const { code } = await exec(bin('vitest'), [
        'run',
        '--reporter=default',
        '--reporter=json',
        `--outputFile.json=${json}`,
      ]);
      const c = vitestCounts(json);
      add(c);
      return code === 0 && c.failed === 0;
    },
  },
  { name: 'build', run: async () => (await exec(bin('remix'), ['vite:build'])).code === 0 },
  {
    name: 'e2e',
    run: async () => {
      const json = path.join(out, 'e2e.json');
      const { code } = await exec(bin('vitest'), [
        'run',
        '-c',
        'vitest.e2e.config.ts',
        '--reporter=default',
        '--reporter=json',
        `--outputFile.json=${json}`,
      ]);
      const c = vitestCounts(json);
      add(c);
      return code === 0 && c.failed === 0;
    },
  },
  {
    name: 'deno',
    run: async () => {
      const { code, output } = await exec(
        bin('deno'),
        ['test', '-A', '--no-check', 'relay-service/tests/deno/'],
        {
          ...process.env,
          NO_COLOR: '1',
        },
      );
      // Deno closes with e.g. "ok | 3 passed | 0 failed (1s)".
      const m = /(ok|FAILED) \| (\d+) passed(?: \((\d+) steps\))? \| (\d+) failed/.exec(output);
      if (m) add({ passed: Number(m[2]), failed: Number(m[4]), skipped: 0 });
      return code === 0;
    },
  },
];

function add(c: Counts) {
  total.passed += c.passed;
  total.failed += c.failed;
  total.skipped += c.skipped;
}

for (const step of steps) {
  if (only && !only.includes(step.name)) continue;
  console.log(`\n=== ${step.name} ===`);
  const failedBefore = total.failed;
  const ok = await step.run();
  if (!ok) {
    failures.push(step.name);
    // A failed step that reported no failing test (a lint error, a crash) still counts as one failure, so
    // the summary line can never read green when a step was red.
    if (total.failed === failedBefore) total.failed += 1;
  }
}

console.log(`\nsteps failed: ${failures.length ? failures.join(', ') : 'none'}`);
console.log(`tests: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
process.exit(failures.length ? 1 : 0);
