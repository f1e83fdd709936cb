/**
 * `npm run secrets:rotate` (ADR 019, ADR 035): brings every stored secret under the current key: channel keys,
 * secret options, token keys (with their lookup hash) and webhook secrets (in users.setting and the copies in
 * notification_outbox). Values are opened with any
 * key of the box (SECRETS_KEY and SECRETS_KEY_PREVIOUS; plaintext rows need none) and sealed again with
 * SECRETS_KEY; without SECRETS_KEY they are written back as plaintext (turning encryption off). One transaction
 * per table, rows locked; rows already in the target form are left alone, so a second run changes nothing.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { OPTIONS } from '../options/registry.ts';
import {
  assertSecretsReadable,
  isSealed,
  SEALED_COLUMNS,
  type SealedColumn,
  type SecretBox,
  sealedKeyId,
} from './secrets.ts';

export type RotationCount = {
  table: string;
  column: string;
  /** Rows holding a secret (empty values excluded). */
  total: number;
  /** Of those, how many are plaintext and how many are sealed under each key id, before the run. */
  plaintext: number;
  sealed: Record<string, number>;
  /** Rows rewritten (or, in a dry run, that would be). */
  changed: number;
};

const isSecretOption = (key: string) =>
  (OPTIONS as Record<string, { secret: boolean }>)[key]?.secret === true;

/** True when `stored` (and its lookup hash, for a hashed column) is not yet in the form `box` writes. */
function needsChange(stored: string, hash: string | null | undefined, box: SecretBox): boolean {
  if (stored === '') return false;
  if (box.enabled)
    return sealedKeyId(stored) !== box.keyId || (hash !== undefined && !hash?.startsWith(`${box.keyId}:`));
  return isSealed(stored) || (hash !== undefined && hash !== null);
}

/** The webhook secret inside a JSON text, and the text with it replaced (other keys and their order kept). */
function jsonSecret(text: string, path: NonNullable<SealedColumn['json']>) {
  let outer: Record<string, unknown> | null = null;
  let setting: Record<string, unknown> | null = null;
  try {
    outer = JSON.parse(text);
    setting = path === 'setting' ? outer : JSON.parse(String(outer?.setting ?? ''));
  } catch {
    return null;
  }
  if (!setting || typeof setting !== 'object' || typeof setting.webhook_secret !== 'string') return null;
  const inner = setting;
  return {
    stored: inner.webhook_secret as string,
    with(next: string): string {
      const updated = JSON.stringify({ ...inner, webhook_secret: next });
      return path === 'setting' ? updated : JSON.stringify({ ...outer, setting: updated });
    },
  };
}

export async function rotateSecrets(
  orm: MikroORM,
  box: SecretBox,
  opts: { dryRun?: boolean } = {},
): Promise<RotationCount[]> {
  // Every sealed value must open before anything is written (a missing key changes no table at all).
  if (!opts.dryRun)
    await assertSecretsReadable(
      async (sql, params) => orm.em.getConnection().execute(sql, params ?? [], 'all'),
      box,
    );
  const report: RotationCount[] = [];
  for (const spec of SEALED_COLUMNS as readonly SealedColumn[]) {
    const count = await orm.em.fork().transactional(async (em) => {
      const slotId = spec.slotId ?? spec.id;
      const hashSelect = spec.hash ? `, "${spec.hash.column}" as hash` : '';
      // JSON columns: only rows that mention a webhook secret are read (and locked).
      const filter = spec.json ? ` where "${spec.column}" like '%webhook\\_secret%'` : '';
      const rows = (await em.execute(
        `select "${spec.id}" as id, "${slotId}" as slot_id, "${spec.column}" as value${hashSelect}
           from "${spec.table}"${filter} order by 1 for update`,
      )) as { id: string | number; slot_id: string | number; value: string | null; hash?: string | null }[];
      const c: RotationCount = {
        table: spec.table,
        column: spec.column,
        total: 0,
        plaintext: 0,
        sealed: {},
        changed: 0,
      };
      for (const row of rows) {
        const text = row.value ?? '';
        const inJson = spec.json ? jsonSecret(text, spec.json) : null;
        if (spec.json && !inJson) continue;
        const stored = inJson ? inJson.stored : text;
        if (stored === '') continue;
        if (spec.table === 'options' && !isSecretOption(String(row.id)) && !isSealed(stored)) continue;
        c.total += 1;
        const kid = sealedKeyId(stored);
        if (kid === null) c.plaintext += 1;
        else c.sealed[kid] = (c.sealed[kid] ?? 0) + 1;
        if (!needsChange(stored, spec.hash ? (row.hash ?? null) : undefined, box)) continue;
        c.changed += 1;
        if (opts.dryRun) continue;
        const slot = spec.slot(row.slot_id);
        const plain = await box.open(stored, slot);
        const next = await box.seal(plain, slot);
        const value = inJson ? inJson.with(next) : next;
        if (spec.hash) {
          await em.execute(
            `update "${spec.table}" set "${spec.column}" = ?, "${spec.hash.column}" = ? where "${spec.id}" = ?`,
            [value, box.lookupHash(plain, spec.hash.purpose), row.id],
          );
        } else {
          await em.execute(`update "${spec.table}" set "${spec.column}" = ? where "${spec.id}" = ?`, [
            value,
            row.id,
          ]);
        }
      }
      return c;
    });
    report.push(count);
  }
  return report;
}
