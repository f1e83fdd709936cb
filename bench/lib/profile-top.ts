/**
 * Summarises the newest V8 .cpuprofile in a directory (written by the relay under `npm run bench -- --profile`):
 * self time by function and by package/file, so the next profiling step knows where the relay spends CPU.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

type Node = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
};
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[] };

function where(url: string): string {
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 13).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  const i = url.indexOf('/main/');
  return i >= 0 ? url.slice(i + 6) : url || '(native)';
}

export function topOfNewestProfile(dir: string, limit = 25): string {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => path.join(dir, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  const file = files[0];
  if (!file) return `no .cpuprofile in ${dir}`;
  const prof = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  prof.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0));
  });
  // Percentages of busy time: idle and the VM's own bookkeeping are left out.
  const idle = new Set(
    prof.nodes.filter((n) => ['(idle)', '(program)'].includes(n.callFrame.functionName)).map((n) => n.id),
  );
  const total = [...self.entries()].reduce((a, [id, us]) => a + (idle.has(id) ? 0 : us), 0);
  // Inclusive time of the relay's own functions (recursion counted once per frame, so a rough view).
  const incl = new Map<number, number>();
  const inclusive = (id: number): number => {
    const known = incl.get(id);
    if (known !== undefined) return known;
    const n = byId.get(id);
    const v = (self.get(id) ?? 0) + (n?.children ?? []).reduce((a, c) => a + inclusive(c), 0);
    incl.set(id, v);
    return v;
  };
  const own = new Map<string, number>();
  for (const n of prof.nodes) {
    if (!n.callFrame.url.includes('relay-service/src/')) continue;
    const k = `${n.callFrame.functionName || '(anonymous)'}  ${where(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
    own.set(k, (own.get(k) ?? 0) + inclusive(n.id));
  }
  const fn = new Map<string, number>();
  const file2 = new Map<string, number>();
  for (const [id, us] of self) {
    if (idle.has(id)) continue;
    const cf = byId.get(id)?.callFrame;
    if (!cf) continue;
    const w = where(cf.url);
    const k = `${cf.functionName || '(anonymous)'}  ${w}:${cf.lineNumber + 1}`;
    fn.set(k, (fn.get(k) ?? 0) + us);
    file2.set(w, (file2.get(w) ?? 0) + us);
  }
  const top = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([k, us]) => `${((us / total) * 100).toFixed(1).padStart(5)}%  ${k}`)
      .join('\n');
  return `Profile ${file} (${(total / 1e6).toFixed(1)} s busy; % of busy time)\n\nSelf time by function:\n${top(fn)}\n\nSelf time by package/file:\n${top(file2)}\n\nInclusive time of relay-service functions:\n${top(own)}\n`;
}
