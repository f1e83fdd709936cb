/**
 * `NODE_ENV=production npm start` on a fresh clone (issue 23 item 9): scripts/ensure.sh installs the locked
 * dependencies, and under NODE_ENV=production npm leaves devDependencies out unless told otherwise. Those hold the
 * locked Node 22 that runs the .ts entry points (the system Node cannot) and the console's build tools, so the
 * launcher died with ERR_UNKNOWN_FILE_EXTENSION. npm itself decides what it would install: the script runs with
 * an `npm` first on PATH that adds `--dry-run` to the real npm's arguments.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-ensure-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('under NODE_ENV=production, ensure.sh installs the locked Node 22 and the build tools (devDependencies)', () => {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    workspaces: string[];
    devDependencies: Record<string, string>;
  };
  const clone = path.join(dir, 'clone');
  for (const f of [
    'package.json',
    'package-lock.json',
    'scripts/ensure.sh',
    ...pkg.workspaces.map((w) => `${w}/package.json`),
  ]) {
    mkdirSync(path.dirname(path.join(clone, f)), { recursive: true });
    copyFileSync(path.join(root, f), path.join(clone, f));
  }
  const realNpm = spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim();
  expect(realNpm, 'npm on PATH').not.toBe('');
  const bin = path.join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(path.join(bin, 'npm'), `#!/bin/sh\nexec "${realNpm}" "$@" --dry-run --ignore-scripts\n`);
  chmodSync(path.join(bin, 'npm'), 0o755);

  const r = spawnSync('sh', ['scripts/ensure.sh'], {
    cwd: clone,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, NODE_ENV: 'production', PATH: `${bin}:${process.env.PATH}` },
  });
  expect(r.status, r.stderr).toBe(0);
  expect(r.stderr).toMatch(/installing the locked dependencies/);
  const added = new Set([...r.stdout.matchAll(/^add (\S+) (\S+)$/gm)].map((m) => `${m[1]}@${m[2]}`));
  for (const name of ['node', '@remix-run/dev', 'vite'])
    expect(added, `${name} would be installed`).toContain(`${name}@${pkg.devDependencies[name]}`);
}, 130_000);
