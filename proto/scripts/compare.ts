/**
 * Drift check for the committed ts-proto output (`npm run check -w proto`).
 * `buf generate --output .check` has just regenerated everything into `.check/gen`; this compares it with
 * `gen/`, prints every added, removed or changed file and exits 1 when they differ. `.check/` is removed.
 * Run from proto/ (npm does that) or pass the proto directory as the first argument.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';

const protoDir = path.resolve(process.argv[2] ?? '.');
const committed = path.join(protoDir, 'gen');
const fresh = path.join(protoDir, '.check', 'gen');

function listFiles(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  if (!existsSync(dir)) return files;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    files.set(path.relative(dir, full).split(path.sep).join('/'), readFileSync(full));
  }
  return files;
}

/** First differing line, to point the reader at the change without a diff tool. */
function firstDifference(a: Buffer, b: Buffer): string {
  const left = a.toString('utf8').split('\n');
  const right = b.toString('utf8').split('\n');
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    if (left[i] !== right[i]) {
      return `line ${i + 1}:\n      committed:   ${left[i] ?? '(end of file)'}\n      regenerated: ${right[i] ?? '(end of file)'}`;
    }
  }
  return '(identical text)';
}

if (!existsSync(fresh)) {
  console.error(
    `proto check: ${path.relative(process.cwd(), fresh)} does not exist; run buf generate --output .check first`,
  );
  process.exit(2);
}

const before = listFiles(committed);
const after = listFiles(fresh);
const problems: string[] = [];
for (const [name, content] of after) {
  const old = before.get(name);
  if (!old) problems.push(`  added    gen/${name}`);
  else if (!old.equals(content)) problems.push(`  changed  gen/${name}, ${firstDifference(old, content)}`);
}
for (const name of before.keys()) {
  if (!after.has(name)) problems.push(`  removed  gen/${name}`);
}
rmSync(path.join(protoDir, '.check'), { recursive: true, force: true });

if (problems.length > 0) {
  console.error(`proto/gen is out of date with the .proto files (${problems.length} file(s)):`);
  console.error(problems.join('\n'));
  console.error('Run `npm run proto:gen` and commit proto/gen.');
  process.exit(1);
}
console.log(`proto/gen is up to date (${after.size} files)`);
