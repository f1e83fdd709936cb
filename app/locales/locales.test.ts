/**
 * CI check on translations (issue 15): every namespace has the same keys in zh and en, none empty, and every
 * literal key the app/ source passes to t(), <Trans i18nKey>, or a menu's labelKey exists in the namespaces that
 * file uses. Keys built at run time (`t(\`status.${key}\`)`) must have a static prefix naming an object of the
 * namespace; the few that do not are listed in DYNAMIC_KEYS with the reason.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { resources } from '#app/i18n/resources.ts';

const appDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
type Tree = Record<string, unknown>;
const zh = resources.zh as unknown as Record<string, Tree>;
const en = resources.en as unknown as Record<string, Tree>;
const namespaces = Object.keys(zh);

/** Keys whose whole name is computed; each is checked by the code that builds it. */
const DYNAMIC_KEYS: Record<string, string> = {
  // the namespace and key come from a zod issue message (`ns:key`), with a default value
  'domain/validation.ts:${opts.ns}:${issue.message}': 'zod issue messages name their own key',
  // confirmation messages and saved messages named by each option spec (settings namespace)
  'domain/settings/option-form.server.ts:settings:${c.message}': 'option spec confirmations',
  "domain/settings/option-form.server.ts:settings:${spec.saved ?? 'optionForm.saved'}":
    'option spec saved text',
  'domain/settings/option-form.server.ts:settings:${own}':
    "a key's own refusal message named by its option spec",
};

export function flatKeys(value: unknown, prefix = ''): string[] {
  if (typeof value !== 'object' || value === null) return [prefix];
  return Object.entries(value).flatMap(([k, v]) => flatKeys(v, prefix ? `${prefix}.${k}` : k));
}

function lookup(tree: Tree, key: string): unknown {
  return key.split('.').reduce<unknown>((o, k) => {
    if (typeof o !== 'object' || o === null) return undefined;
    return (o as Tree)[k];
  }, tree);
}

/** A key exists as a string, or as a plural family (key_one, key_other), or as an object (returnObjects). */
function exists(ns: string, key: string, wantObject = false): boolean {
  const tree = zh[ns];
  if (!tree) return false;
  const value = lookup(tree, key);
  if (wantObject) return typeof value === 'object' && value !== null;
  if (value !== undefined) return true;
  return lookup(tree, `${key}_one`) !== undefined || lookup(tree, `${key}_other`) !== undefined;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return name === 'locales' ? [] : sourceFiles(full);
    if (!/\.(ts|tsx)$/.test(name) || /\.test\.tsx?$/.test(name)) return [];
    return [full];
  });
}

type Use = { file: string; key: string; raw: string; ns: string[]; dynamic: boolean };

/** Files whose `t` is a local wrapper adding a prefix to every key (checked with the prefix). */
const LOCAL_T_PREFIX: Record<string, string> = {
  'domain/settings/options.server.ts': 'settings:options.errors.',
};

/** The literal keys of one source file, with the namespaces they may come from. */
export function scanSource(file: string, text: string): Use[] {
  const fileNs = new Set<string>(['common']);
  let anyNs = false;
  for (const m of text.matchAll(/useTranslation\(\s*([^)]*)\)/g)) {
    const arg = (m[1] ?? '').trim();
    if (!arg) continue;
    const lit = /^['"](\w+)['"]/.exec(arg);
    if (lit?.[1]) fileNs.add(lit[1]);
    else if (/^\[/.test(arg)) for (const s of arg.matchAll(/['"](\w+)['"]/g)) fileNs.add(s[1] ?? '');
    else anyNs = true;
  }
  for (const m of text.matchAll(/getFixedT\(([^()]*(?:\([^()]*\))?[^()]*)\)/g)) {
    const lit = /,\s*['"](\w+)['"]\s*$/.exec(m[1] ?? '');
    if (lit?.[1]) fileNs.add(lit[1]);
  }
  // a `t` received from elsewhere (a TFunction parameter, ctx.t): its namespace is not known from this file
  let explicit = false;
  if (/useTranslation\(|getFixedT\(/.test(text)) explicit = true;
  if (!explicit || /\bTFunction\b|\bctx\.t\(/.test(text)) anyNs = true;
  const prefix = LOCAL_T_PREFIX[file] ?? '';
  const nsFor = (raw: string, opts?: string): { ns: string[]; key: string; raw: string } => {
    const key = /^\w+:/.test(raw) ? raw : prefix + raw;
    const colon = /^(\w+):(.+)$/.exec(key);
    if (colon?.[1] && colon[2] && namespaces.includes(colon[1]))
      return { ns: [colon[1]], key: colon[2], raw };
    const optNs = opts ? /\bns:\s*['"](\w+)['"]/.exec(opts) : null;
    if (optNs?.[1]) return { ns: [optNs[1]], key, raw };
    return { ns: anyNs ? namespaces : [...fileNs], key, raw };
  };
  const uses: Use[] = [];
  // t('key'), t("key"), t('key', { ns: 'x' }), i18n.t('key')
  for (const m of text.matchAll(/(?<![\w$])t\(\s*(['"])([^'"\n]+)\1\s*(,\s*\{[^}]*\})?/g)) {
    uses.push({ file, ...nsFor(m[2] ?? '', m[3]), dynamic: false });
  }
  for (const m of text.matchAll(/(?<![\w$])t\(\s*`([^`]+)`/g)) {
    uses.push({ file, ...nsFor(m[1] ?? ''), dynamic: (m[1] ?? '').includes('${') });
  }
  for (const m of text.matchAll(/\b(?:i18nKey|labelKey)(?:=|:\s*)\{?\s*(['"])([^'"\n]+)\1/g)) {
    uses.push({ file, ...nsFor(m[2] ?? ''), dynamic: false });
  }
  return uses;
}

describe('translations', () => {
  it('has the same namespaces in zh and en', () => {
    expect(Object.keys(en).sort()).toEqual(namespaces.slice().sort());
  });

  it.each(namespaces)('namespace %s: every key in both languages, none empty', (ns) => {
    const zhKeys = flatKeys(zh[ns]).sort();
    const enKeys = flatKeys(en[ns]).sort();
    const onlyZh = zhKeys.filter((k) => !enKeys.includes(k));
    const onlyEn = enKeys.filter((k) => !zhKeys.includes(k));
    expect({ onlyZh, onlyEn }).toEqual({ onlyZh: [], onlyEn: [] });
    for (const [lng, tree] of [
      ['zh', zh[ns] ?? {}],
      ['en', en[ns] ?? {}],
    ] as const) {
      const empty = flatKeys(tree).filter((k) => {
        const v = lookup(tree, k);
        return typeof v !== 'string' || v.trim() === '';
      });
      expect(empty, `${lng}:${ns} empty or non-text values`).toEqual([]);
    }
  });

  it('every key the app source uses exists (static scan of t(), i18nKey and labelKey)', () => {
    const missing: string[] = [];
    let checked = 0;
    for (const full of sourceFiles(appDir)) {
      const rel = path.relative(appDir, full);
      for (const use of scanSource(rel, readFileSync(full, 'utf8'))) {
        checked++;
        if (use.dynamic) {
          if (DYNAMIC_KEYS[`${rel}:${use.raw}`]) continue;
          const prefix = use.key.slice(0, use.key.indexOf('${'));
          // `status.${x}`: the prefix `status` must be an object of one of the namespaces
          const objectKey = prefix.endsWith('.') ? prefix.slice(0, -1) : '';
          if (!objectKey || !use.ns.some((ns) => exists(ns, objectKey, true)))
            missing.push(
              `${rel}: dynamic key \`${use.key}\` (no object '${objectKey}' in ${use.ns.join('|')})`,
            );
          continue;
        }
        if (!use.ns.some((ns) => exists(ns, use.key)))
          missing.push(`${rel}: '${use.key}' (${use.ns.join('|')})`);
      }
    }
    expect(checked).toBeGreaterThan(500);
    expect(missing).toEqual([]);
  });

  it('the scan itself finds keys, namespaces and dynamic prefixes', () => {
    const uses = scanSource(
      'x.tsx',
      `const { t } = useTranslation('logs'); t('title'); t('common:nav.home'); t(\`type.\${k}\`);
       t('pageSize', { ns: 'common' }); <Trans i18nKey="a.b" />; const m = { labelKey: 'sidebar.log' };`,
    );
    expect(uses.map((u) => [u.key, u.ns.join('|'), u.dynamic])).toEqual([
      ['title', 'common|logs', false],
      ['nav.home', 'common', false],
      ['pageSize', 'common', false],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the scanned source text
      ['type.${k}', 'common|logs', true],
      ['a.b', 'common|logs', false],
      ['sidebar.log', 'common|logs', false],
    ]);
    expect(exists('logs', 'title')).toBe(true);
    expect(exists('logs', 'no.such.key')).toBe(false);
  });
});
