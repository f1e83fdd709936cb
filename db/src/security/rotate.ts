/**
 * `npm run secrets:rotate` (ADR 019): brings every stored secret under the current key. Values are opened with any
 * key of the box (SECRETS_KEY and SECRETS_KEY_PREVIOUS; plaintext rows need none) and sealed again with
 * SECRETS_KEY; without SECRETS_KEY they are written back as plaintext (turning encryption off). One transaction
 * per table, rows locked; rows already in the target form are left alone, so a second run changes nothing.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { OPTIONS } from '../options/registry.ts';
import { assertSecretsReadable, isSealed, SEALED_COLUMNS, type SecretBox, sealedKeyId } from './secrets.ts';

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

/** True when `stored` is not yet in the form `box` writes. */
function needsChange(stored: string, box: SecretBox): boolean {
  if (stored === '') return false;
  return box.enabled ? sealedKeyId(stored) !== box.keyId : isSealed(stored);
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
  for (const spec of SEALED_COLUMNS) {
    const count = await orm.em.fork().transactional(async (em) => {
      const rows = (await em.execute(
        `select "${spec.id}" as id, "${spec.column}" as value from "${spec.table}" order by 1 for update`,
      )) as { id: string | number; value: string | null }[];
      const c: RotationCount = {
        table: spec.table,
        column: spec.column,
        total: 0,
        plaintext: 0,
        sealed: {},
        changed: 0,
      };
      for (const row of rows) {
        const stored = row.value ?? '';
        if (stored === '') continue;
        if (spec.table === 'options' && !isSecretOption(String(row.id)) && !isSealed(stored)) continue;
        c.total += 1;
        const kid = sealedKeyId(stored);
        if (kid === null) c.plaintext += 1;
        else c.sealed[kid] = (c.sealed[kid] ?? 0) + 1;
        if (!needsChange(stored, box)) continue;
        c.changed += 1;
        if (opts.dryRun) continue;
        const slot = spec.slot(row.id);
        const next = await box.seal(await box.open(stored, slot), slot);
        await em.execute(`update "${spec.table}" set "${spec.column}" = ? where "${spec.id}" = ?`, [
          next,
          row.id,
        ]);
      }
      return c;
    });
    report.push(count);
  }
  return report;
}
