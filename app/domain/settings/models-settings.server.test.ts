/**
 * The settings "models" tab's save path against real PostgreSQL and a real OptionService: only changed keys are
 * written (one audited OptionService.set each), a refusal of any key writes nothing, messages per field, the
 * checkbox's hidden 'false' + 'true' form encoding, and 403 for a non-admin.
 */
import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Role } from '@switchyard/db/entities/user.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createMemoryPubSub, type PubSub } from '@switchyard/db/pubsub.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import type { TFunction } from 'i18next';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ForbiddenError, InputError } from '#app/domain/errors.ts';
import type { ModelTabCtx } from '#app/domain/pricing/model-tab.server.ts';
import { loadModelsSettings, readModelsForm, saveModelsSettings } from './models-settings.server.ts';

let db: TestDatabase;
let pubsub: PubSub;
let options: OptionService;

// Echoes the key and its values, so the tests see which message was chosen.
const t = ((key: string, values?: Record<string, unknown>) =>
  values ? `${key} ${JSON.stringify(values)}` : key) as unknown as TFunction;

const ctxFor = (role: number): ModelTabCtx => ({
  em: db.orm.em.fork(),
  options,
  actor: { id: 7, username: 'root', displayName: 'root', role, group: 'default' },
  t,
  ip: '203.0.113.9',
});

async function refusal(p: Promise<unknown>): Promise<InputError> {
  const error = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InputError);
  return error as InputError;
}

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'models_settings' });
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
  options = new OptionService({ orm: db.orm, pubsub, channel: `models-settings-${Date.now()}` });
  await options.load();
});

describe('models settings tab', () => {
  it('loads the six options as text, JSON pretty-printed', () => {
    const tab = loadModelsSettings(options);
    expect(JSON.parse(tab.values['claude.default_max_tokens'])).toEqual({ default: 8192 });
    expect(tab.values['claude.thinking_adapter_enabled']).toBe('true');
    expect(tab.values['claude.thinking_adapter_budget_tokens_percentage']).toBe('0.8');
    expect(tab.values['gemini.safety_settings']).toContain('\n');
    expect(tab.thresholds).toContain('BLOCK_NONE');
  });

  it('writes only the changed keys, each audited with the actor and address', async () => {
    const current = loadModelsSettings(options).values;
    const n = await saveModelsSettings(ctxFor(Role.Admin), {
      ...current,
      // Same content, other formatting: not a change.
      'gemini.safety_settings': '{ "default" : "OFF" }',
      'claude.default_max_tokens': '{"default":4096,"claude-3-5-haiku-20241022":1000}',
      'claude.thinking_adapter_budget_tokens_percentage': ' 0.5 ',
    });
    expect(n).toBe(2);
    expect(options.get('claude.default_max_tokens')).toEqual({
      default: 4096,
      'claude-3-5-haiku-20241022': 1000,
    });
    expect(options.get('claude.thinking_adapter_budget_tokens_percentage')).toBe(0.5);
    const audits = await db.orm.em.fork().find(AuditEntry, {}, { orderBy: { id: 'asc' } });
    expect(audits.map((a) => [a.targetId, a.actorId, a.ip])).toEqual([
      ['claude.default_max_tokens', 7, '203.0.113.9'],
      ['claude.thinking_adapter_budget_tokens_percentage', 7, '203.0.113.9'],
    ]);
    const again = await refusal(saveModelsSettings(ctxFor(Role.Admin), loadModelsSettings(options).values));
    expect(again.message).toBe('settings:modelsTab.errors.nothingChanged');
  });

  it('refuses invalid JSON, bad shapes and an out-of-range budget per field, writing nothing', async () => {
    const error = await refusal(
      saveModelsSettings(ctxFor(Role.Admin), {
        'claude.default_max_tokens': '{"default": 8192',
        'claude.thinking_adapter_budget_tokens_percentage': '1.5',
        'gemini.version_settings': '{"default":"v2"}',
        'claude.model_headers_settings': '{"claude-x":{"anthropic-beta":"a"}}',
      }),
    );
    expect(error.fieldErrors['claude.default_max_tokens']).toEqual([
      'settings:modelsTab.errors.invalidJson {"key":"claude.default_max_tokens"}',
    ]);
    expect(error.fieldErrors['claude.thinking_adapter_budget_tokens_percentage']).toEqual([
      'settings:modelsTab.errors.budgetRange',
    ]);
    expect(error.fieldErrors['gemini.version_settings']?.[0]).toContain('must be one of v1, v1beta, v1alpha');
    // The summary is the first refused field in the tab's order (Gemini comes first).
    expect(error.message).toBe(error.fieldErrors['gemini.version_settings']?.[0]);
    // The valid header change next to the refused keys was not written.
    expect(options.get('claude.model_headers_settings')).toEqual({});
    expect(await db.orm.em.fork().count(AuditEntry, {})).toBe(0);
    const low = await refusal(
      saveModelsSettings(ctxFor(Role.Admin), { 'claude.thinking_adapter_budget_tokens_percentage': '0.05' }),
    );
    expect(low.message).toBe('settings:modelsTab.errors.budgetRange');
  });

  it("reads the checkbox as its last value: hidden 'false', then 'true' when checked", async () => {
    const form = new FormData();
    form.append('claude.thinking_adapter_enabled', 'false');
    expect(readModelsForm(form)).toEqual({ 'claude.thinking_adapter_enabled': 'false' });
    await saveModelsSettings(ctxFor(Role.Admin), readModelsForm(form));
    expect(options.get('claude.thinking_adapter_enabled')).toBe(false);
    form.append('claude.thinking_adapter_enabled', 'true');
    await saveModelsSettings(ctxFor(Role.Admin), readModelsForm(form));
    expect(options.get('claude.thinking_adapter_enabled')).toBe(true);
  });

  it('forbids a non-admin', async () => {
    await expect(
      saveModelsSettings(ctxFor(Role.User), { 'claude.default_max_tokens': '{"default":1}' }),
    ).rejects.toBeInstanceOf(ForbiddenError);
    expect(options.get('claude.default_max_tokens')).toEqual({ default: 8192 });
  });
});
