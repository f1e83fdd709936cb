/**
 * The shared save mechanics of the admin settings tabs (ADR 023) against real PostgreSQL and a real
 * OptionService: only changed keys are written (each audited), nothing changed is refused with the seed's
 * message, a bad value saves nothing and names the key with the registry's rule, secrets are write-only (an
 * empty field keeps the stored value, the load never returns it), and a failure after a saved key says
 * 'partial save failed' with that key's error.
 */
import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Role } from '@switchyard/db/entities/user.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createMemoryPubSub, type PubSub } from '@switchyard/db/pubsub.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import type { TFunction } from 'i18next';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ForbiddenError, InputError } from '#app/domain/errors.ts';
import {
  loadOptionValues,
  type OptionFormSpec,
  readOptionForm,
  saveOptionForm,
} from '#app/domain/settings/option-form.server.ts';
import type { OptionsCtx } from '#app/domain/settings/options.server.ts';

let db: TestDatabase;
let pubsub: PubSub;
let options: OptionService;

const t = ((key: string, values?: Record<string, unknown>) =>
  values ? `${key} ${JSON.stringify(values)}` : key) as unknown as TFunction;

const SPEC: OptionFormSpec = {
  tab: 'test',
  id: 'test',
  keys: [
    'SystemName',
    'Notice',
    'SMTPToken',
    'DataExportInterval',
    'ModelRequestRateLimitEnabled',
    'ServerAddress',
  ],
};

const ctxFor = (role: number = Role.Admin, opts: OptionService = options): OptionsCtx => ({
  options: opts,
  actor: { id: 7, username: 'root', displayName: 'root', role, group: 'default' },
  t,
  ip: '203.0.113.9',
});

const form = (fields: [string, string][]) => {
  const f = new FormData();
  for (const [k, v] of fields) f.append(k, v);
  return f;
};

async function refusal(p: Promise<unknown>): Promise<InputError> {
  const error = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InputError);
  return error as InputError;
}

const audited = async () =>
  (await db.orm.em.fork().find(AuditEntry, {}, { orderBy: { id: 'asc' } })).map((a) => a.targetId);

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'option_form' });
  pubsub = createMemoryPubSub();
});
afterAll(async () => {
  await options?.close();
  await pubsub?.close();
  await db?.drop();
});
beforeEach(async () => {
  await db.orm.em.getConnection().execute('truncate table audit_entries, options restart identity cascade');
  await options?.close();
  options = new OptionService({ orm: db.orm, pubsub, channel: `option-form-${Date.now()}` });
  await options.load();
});

describe('option form mechanics', () => {
  it('saves only the changed keys, one audited write each', async () => {
    const input = readOptionForm(
      SPEC,
      form([
        ['SystemName', 'Switchyard'], // the default: unchanged
        ['Notice', 'line 1\r\nline 2'],
        ['SMTPToken', ''],
        ['DataExportInterval', ' 5 '], // the default, spaces around: unchanged
        ['ModelRequestRateLimitEnabled', 'false'],
        ['ModelRequestRateLimitEnabled', 'true'],
        ['ServerAddress', 'https://gw.example.com/'],
      ]),
    );
    // ServerAddress is root-only (ADR 033): root saves this form.
    expect(await saveOptionForm(ctxFor(Role.Root), SPEC, input)).toEqual([
      'Notice',
      'ModelRequestRateLimitEnabled',
      'ServerAddress',
    ]);
    expect(options.getRaw('Notice')).toBe('line 1\nline 2');
    expect(options.get('ModelRequestRateLimitEnabled')).toBe(true);
    expect(options.getRaw('ServerAddress')).toBe('https://gw.example.com');
    expect(await audited()).toEqual(['Notice', 'ModelRequestRateLimitEnabled', 'ServerAddress']);
    // The same post again changes nothing: the trailing slash and the CRLF compare equal to what is stored.
    const again = await refusal(saveOptionForm(ctxFor(Role.Root), SPEC, input));
    expect(again.message).toBe('settings:optionForm.nothingChanged');
    // An administrator posting the same form is not refused for the root-only keys it leaves as stored.
    const admin = await refusal(saveOptionForm(ctxFor(), SPEC, input));
    expect(admin.message).toBe('settings:optionForm.nothingChanged');
    expect(await audited()).toHaveLength(3);
  });

  it('refuses a bad value with the registry rule and saves nothing, not even the good keys', async () => {
    const error = await refusal(
      saveOptionForm(ctxFor(), SPEC, { Notice: 'hello', DataExportInterval: '0', SystemName: 'X' }),
    );
    expect(error.message).toBe('settings:options.errors.min {"key":"DataExportInterval","min":"1"}');
    expect(error.fieldErrors).toEqual({ DataExportInterval: [error.message] });
    expect(options.getRaw('Notice')).toBe('');
    expect(options.getRaw('SystemName')).toBe('Switchyard');
    expect(await audited()).toEqual([]);
  });

  it('treats secrets as write-only: never loaded, empty keeps the stored value, non-empty replaces it', async () => {
    await saveOptionForm(ctxFor(Role.Root), SPEC, { SMTPToken: 's3cret' });
    expect(options.getRaw('SMTPToken')).toBe('s3cret');
    const loaded = loadOptionValues(options, SPEC.keys, { role: Role.Root });
    expect(loaded.values.SMTPToken).toBe('');
    expect(loaded.secretsSet).toEqual({ SMTPToken: true });
    expect(JSON.stringify(loaded)).not.toContain('s3cret');
    const kept = await refusal(saveOptionForm(ctxFor(Role.Root), SPEC, { SMTPToken: '' }));
    expect(kept.message).toBe('settings:optionForm.nothingChanged');
    expect(options.getRaw('SMTPToken')).toBe('s3cret');
    await saveOptionForm(ctxFor(Role.Root), SPEC, { SMTPToken: 'n3w' });
    expect(options.getRaw('SMTPToken')).toBe('n3w');
    const audits = await db.orm.em.fork().find(AuditEntry, {});
    expect(JSON.stringify(audits)).not.toMatch(/s3cret|n3w/);
  });

  it("says 'partial save failed' with the key's error when a write fails after another was saved", async () => {
    const failing = new Proxy(options, {
      get(target, prop) {
        if (prop === 'set')
          return async (key: string, ...rest: unknown[]) => {
            if (key === 'Notice') throw new Error('connection lost');
            return (target.set as (...a: unknown[]) => Promise<unknown>).call(target, key, ...rest);
          };
        const v = Reflect.get(target, prop, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const error = await refusal(
      saveOptionForm(ctxFor(Role.Admin, failing), SPEC, { SystemName: 'Gate', Notice: 'hi' }),
    );
    expect(error.message).toBe('settings:optionForm.partialFailed');
    expect(error.fieldErrors).toEqual({ Notice: ['settings:optionForm.saveFailed'] });
    expect(options.getRaw('SystemName')).toBe('Gate');
    expect(options.getRaw('Notice')).toBe('');
  });

  it('keeps text as typed (leading spaces of Markdown) while numbers are trimmed', async () => {
    await saveOptionForm(ctxFor(), SPEC, { Notice: '    code block\n', DataExportInterval: ' 7 ' });
    expect(options.getRaw('Notice')).toBe('    code block\n');
    expect(options.getRaw('DataExportInterval')).toBe('7');
  });

  it('refuses an administrator the whole form when it would change a root-only key (ADR 033)', async () => {
    const error = await refusal(
      saveOptionForm(ctxFor(), SPEC, {
        SystemName: 'Gate',
        Notice: 'hello',
        ServerAddress: 'https://attacker.example',
        SMTPToken: 'stolen',
      }),
    );
    expect(error.message).toBe(
      'settings:options.errors.rootOnly {"key":"SMTPToken"}; settings:options.errors.rootOnly {"key":"ServerAddress"}',
    );
    expect(error.fieldErrors).toEqual({
      SMTPToken: ['settings:options.errors.rootOnly {"key":"SMTPToken"}'],
      ServerAddress: ['settings:options.errors.rootOnly {"key":"ServerAddress"}'],
    });
    // Nothing saved, not even the keys an administrator may change.
    expect(options.getRaw('SystemName')).toBe('Switchyard');
    expect(options.getRaw('Notice')).toBe('');
    expect(options.getRaw('ServerAddress')).toBe('http://localhost:3000');
    expect(options.getRaw('SMTPToken')).toBe('');
    expect(await audited()).toEqual([]);
    // Without the root-only keys the administrator's change is saved.
    expect(await saveOptionForm(ctxFor(), SPEC, { SystemName: 'Gate', Notice: 'hello' })).toEqual([
      'SystemName',
      'Notice',
    ]);
  });

  it('marks the root-only keys read-only for an administrator, none for root', () => {
    const admin = loadOptionValues(options, SPEC.keys, { role: Role.Admin });
    expect(admin.readOnly).toEqual({ SMTPToken: true, ServerAddress: true });
    expect(loadOptionValues(options, SPEC.keys, { role: Role.Root }).readOnly).toEqual({});
  });

  it('refuses a non-admin and NUL text', async () => {
    await expect(saveOptionForm(ctxFor(Role.User), SPEC, { Notice: 'x' })).rejects.toBeInstanceOf(
      ForbiddenError,
    );
    const nul = await refusal(saveOptionForm(ctxFor(), SPEC, { Notice: 'a\u0000b' }));
    expect(nul.fieldErrors).toHaveProperty('Notice');
    expect(await audited()).toEqual([]);
  });
});
