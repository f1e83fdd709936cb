/**
 * The settings "models" tab on the shared option-form mechanics (ADR 023), against real PostgreSQL and a real
 * OptionService: two forms (Gemini, Claude), only changed keys written (one audited `updateOption` each, JSON
 * compared by value), a refusal of any key of a form writes nothing, the budget's own range message, the
 * checkbox's hidden 'false' + 'true' form encoding, 'you seem to have changed nothing', and 403 for a non-admin.
 */
import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { Role } from '@switchyard/db/entities/user.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createMemoryPubSub, type PubSub } from '@switchyard/db/pubsub.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import type { TFunction } from 'i18next';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ForbiddenError, InputError } from '#app/domain/errors.ts';
import { readOptionForm, saveOptionForm } from '#app/domain/settings/option-form.server.ts';
import type { OptionsCtx } from '#app/domain/settings/options.server.ts';
import { findOptionForm } from '#app/domain/settings/tab-forms.server.ts';
import { loadModelsSettings, MODELS_FORMS } from './models-settings.server.ts';

let db: TestDatabase;
let pubsub: PubSub;
let options: OptionService;

// Echoes the key and its values, so the tests see which message was chosen.
const t = ((key: string, values?: Record<string, unknown>) =>
  values ? `${key} ${JSON.stringify(values)}` : key) as unknown as TFunction;

const [GEMINI, CLAUDE] = MODELS_FORMS;

const ctxFor = (role: number): OptionsCtx => ({
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
  it('loads the six options as text, JSON pretty-printed; its two forms post option intents', () => {
    const tab = loadModelsSettings(options, { role: Role.Admin });
    expect(JSON.parse(tab.values['claude.default_max_tokens']!)).toEqual({ default: 8192 });
    expect(tab.values['claude.thinking_adapter_enabled']).toBe('true');
    expect(tab.values['claude.thinking_adapter_budget_tokens_percentage']).toBe('0.8');
    expect(tab.values['gemini.safety_settings']).toContain('\n');
    expect(tab.thresholds).toContain('BLOCK_NONE');
    expect(findOptionForm('option:models-gemini')).toBe(GEMINI);
    expect(findOptionForm('option:models-claude')).toBe(CLAUDE);
  });

  it('writes only the changed keys, each audited with the actor and address', async () => {
    const current = loadModelsSettings(options, { role: Role.Admin }).values;
    const saved = await saveOptionForm(ctxFor(Role.Admin), CLAUDE, {
      ...current,
      'claude.default_max_tokens': '{"default":4096,"claude-3-5-haiku-20241022":1000}',
      'claude.thinking_adapter_budget_tokens_percentage': ' 0.5 ',
    });
    expect(saved).toEqual(['claude.default_max_tokens', 'claude.thinking_adapter_budget_tokens_percentage']);
    expect(options.get('claude.default_max_tokens')).toEqual({
      default: 4096,
      'claude-3-5-haiku-20241022': 1000,
    });
    expect(options.get('claude.thinking_adapter_budget_tokens_percentage')).toBe(0.5);
    // Same content, other formatting: not a change.
    const same = await refusal(
      saveOptionForm(ctxFor(Role.Admin), GEMINI, { 'gemini.safety_settings': '{ "default" : "OFF" }' }),
    );
    expect(same.message).toBe('settings:optionForm.nothingChanged');
    const audits = await db.orm.em.fork().find(AuditEntry, {}, { orderBy: { id: 'asc' } });
    expect(audits.map((a) => [a.targetId, a.actorId, a.ip])).toEqual([
      ['claude.default_max_tokens', 7, '203.0.113.9'],
      ['claude.thinking_adapter_budget_tokens_percentage', 7, '203.0.113.9'],
    ]);
    const again = await refusal(
      saveOptionForm(ctxFor(Role.Admin), CLAUDE, loadModelsSettings(options, { role: Role.Admin }).values),
    );
    expect(again.message).toBe('settings:optionForm.nothingChanged');
  });

  it('refuses invalid JSON, bad shapes and an out-of-range budget per field, writing nothing of the form', async () => {
    const error = await refusal(
      saveOptionForm(ctxFor(Role.Admin), CLAUDE, {
        'claude.default_max_tokens': '{"default": 8192',
        'claude.thinking_adapter_budget_tokens_percentage': '1.5',
        'claude.model_headers_settings': '{"claude-x":{"anthropic-beta":"a"}}',
      }),
    );
    expect(error.fieldErrors['claude.default_max_tokens']).toEqual([
      'settings:options.errors.invalidJson {"key":"claude.default_max_tokens"}',
    ]);
    expect(error.fieldErrors['claude.thinking_adapter_budget_tokens_percentage']).toEqual([
      'settings:modelsTab.errors.budgetRange {"key":"claude.thinking_adapter_budget_tokens_percentage"}',
    ]);
    // The valid header change next to the refused keys was not written.
    expect(options.get('claude.model_headers_settings')).toEqual({});
    const version = await refusal(
      saveOptionForm(ctxFor(Role.Admin), GEMINI, { 'gemini.version_settings': '{"default":"v2"}' }),
    );
    expect(version.fieldErrors['gemini.version_settings']?.[0]).toContain(
      'must be one of v1, v1beta, v1alpha',
    );
    expect(await db.orm.em.fork().count(AuditEntry, {})).toBe(0);
    const low = await refusal(
      saveOptionForm(ctxFor(Role.Admin), CLAUDE, {
        'claude.thinking_adapter_budget_tokens_percentage': '0.05',
      }),
    );
    expect(low.message).toBe(
      'settings:modelsTab.errors.budgetRange {"key":"claude.thinking_adapter_budget_tokens_percentage"}',
    );
  });

  it("reads the checkbox as its last value: hidden 'false', then 'true' when checked", async () => {
    const form = new FormData();
    form.append('claude.thinking_adapter_enabled', 'false');
    expect(readOptionForm(CLAUDE, form)).toEqual({ 'claude.thinking_adapter_enabled': 'false' });
    await saveOptionForm(ctxFor(Role.Admin), CLAUDE, readOptionForm(CLAUDE, form));
    expect(options.get('claude.thinking_adapter_enabled')).toBe(false);
    form.append('claude.thinking_adapter_enabled', 'true');
    await saveOptionForm(ctxFor(Role.Admin), CLAUDE, readOptionForm(CLAUDE, form));
    expect(options.get('claude.thinking_adapter_enabled')).toBe(true);
  });

  it('forbids a non-admin', async () => {
    await expect(
      saveOptionForm(ctxFor(Role.User), CLAUDE, { 'claude.default_max_tokens': '{"default":1}' }),
    ).rejects.toBeInstanceOf(ForbiddenError);
    expect(options.get('claude.default_max_tokens')).toEqual({ default: 8192 });
  });
});
