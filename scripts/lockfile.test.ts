/**
 * The lockfile describes what is installed: `npm ci` accepts it on a fresh clone (issue 13, item 12). A lockfile
 * that misses packages npm would add (for example the optional per-platform binaries of Biome, Deno or Rollup)
 * makes `npm ci` refuse it and makes `npm install` rewrite it, leaving the work tree dirty after `npm start`.
 * `npm ci --dry-run` runs npm's own in-sync check without touching node_modules.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('package-lock.json is in sync with every package.json: npm ci accepts it', () => {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { workspaces: string[] };
  for (const f of ['package.json', 'package-lock.json', ...pkg.workspaces.map((w) => `${w}/package.json`)]) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    copyFileSync(path.join(root, f), path.join(dir, f));
  }
  const r = spawnSync('npm', ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 120_000,
  });
  expect(r.stderr).not.toMatch(/can only install packages when your package\.json and package-lock\.json/);
  expect(r.status, r.stderr).toBe(0);
}, 130_000);
