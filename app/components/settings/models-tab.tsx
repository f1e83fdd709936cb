/**
 * Settings "models" tab (seed 000 §2): Gemini settings and Claude settings in one plain POST form to /setting
 * (works without JavaScript; the server validates every key). With JavaScript the JSON text areas are checked
 * on blur ('not a valid JSON string', seed 000 §5) and the budget percentage against 0.1–1.
 */
import { Form, useActionData, useNavigation } from '@remix-run/react';
import { type ReactNode, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import type {
  ModelsKey,
  ModelsSettingsData,
  ModelsSettingsReply,
} from '#app/domain/settings/models-settings.server.ts';

const INTENT = 'modelsSettings';
const BUDGET = 'claude.thinking_adapter_budget_tokens_percentage';

/** A DOM id for an option key (dots are valid in ids but awkward in CSS selectors). */
const idOf = (key: string) => `opt-${key.replace(/\./g, '-')}`;

function budgetOk(text: string): boolean {
  const n = text.trim() === '' ? Number.NaN : Number(text);
  return Number.isFinite(n) && n >= 0.1 && n <= 1;
}

function jsonOk(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** A labelled control with its help text and the client-side or server error, tied by aria-describedby. */
function Field({
  id,
  label,
  help,
  error,
  children,
}: {
  id: string;
  label: string;
  help?: string;
  error?: string;
  children: (describedBy: string) => ReactNode;
}) {
  const describedBy = [help ? `${id}-help` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div className="models-tab-field">
      <label htmlFor={id}>{label}</label>
      {children(describedBy)}
      {help ? (
        <p id={`${id}-help`} className="hint">
          {help}
        </p>
      ) : null}
      {/* Always rendered: a message appearing on blur must not move the save button under a pending click. */}
      <p
        id={`${id}-error`}
        className="form-error"
        role="alert"
        data-testid={`${id}-error`}
        style={{ minHeight: '1.5em' }}
      >
        {error ?? ''}
      </p>
    </div>
  );
}

export function ModelsTab({ data }: { data: ModelsSettingsData }) {
  const { t } = useTranslation('settings');
  const navigation = useNavigation();
  const busy = navigation.state === 'submitting' && navigation.formData?.get('intent') === INTENT;
  const raw = useActionData() as ModelsSettingsReply | undefined;
  const reply = raw?.intent === INTENT ? raw : undefined;
  // Client-side findings by key: null = edited since the server's answer (its message no longer applies).
  const [local, setLocal] = useState<Partial<Record<ModelsKey, string | null>>>({});
  // A new server answer is the latest word on every field.
  useEffect(() => setLocal({}), [raw]);
  const value = (key: ModelsKey) => reply?.values?.[key] ?? data.values[key];
  const errorOf = (key: ModelsKey) =>
    local[key] === null ? undefined : (local[key] ?? reply?.fieldErrors?.[key]?.[0]);
  const check = (key: ModelsKey, text: string) => {
    const ok = key === BUDGET ? budgetOk(text) : jsonOk(text);
    const msg =
      key === BUDGET ? t('modelsTab.errors.budgetRange') : t('modelsTab.errors.invalidJson', { key });
    setLocal((prev) => ({ ...prev, [key]: ok ? null : msg }));
  };
  const edited = (key: ModelsKey) =>
    setLocal((prev) => (prev[key] === null ? prev : { ...prev, [key]: null }));
  const fieldErrorKeys = Object.keys(reply?.fieldErrors ?? {});

  const jsonArea = (key: ModelsKey, label: string, help: string) => (
    <Field key={key} id={idOf(key)} label={label} help={help} error={errorOf(key)}>
      {(describedBy) => (
        <textarea
          id={idOf(key)}
          name={key}
          rows={6}
          spellCheck={false}
          defaultValue={value(key)}
          className="model-tab-json"
          aria-describedby={describedBy || undefined}
          aria-invalid={errorOf(key) ? true : undefined}
          onChange={() => edited(key)}
          onBlur={(e) => check(key, e.currentTarget.value)}
        />
      )}
    </Field>
  );

  return (
    <Form method="post" action="/setting?tab=models" className="settings-form models-tab" noValidate>
      {reply?.error && fieldErrorKeys.length === 0 ? (
        <p className="form-error" role="alert" data-testid="models-tab-error">
          {reply.error}
        </p>
      ) : null}
      <section className="card" aria-labelledby="models-gemini-title">
        <h2 id="models-gemini-title">{t('modelsTab.geminiTitle')}</h2>
        {jsonArea(
          'gemini.safety_settings',
          t('modelsTab.safety'),
          t('modelsTab.safetyHelp', { values: data.thresholds.join(', ') }),
        )}
        {jsonArea(
          'gemini.version_settings',
          t('modelsTab.version'),
          t('modelsTab.versionHelp', { values: data.versions.join(', ') }),
        )}
      </section>
      <section className="card" aria-labelledby="models-claude-title">
        <h2 id="models-claude-title">{t('modelsTab.claudeTitle')}</h2>
        {jsonArea('claude.model_headers_settings', t('modelsTab.headers'), t('modelsTab.headersHelp'))}
        {jsonArea('claude.default_max_tokens', t('modelsTab.maxTokens'), t('modelsTab.maxTokensHelp'))}
        <div className="models-tab-field">
          {/* An unchecked box posts nothing: the hidden 'false' comes first and a checked box's 'true' wins. */}
          <input type="hidden" name="claude.thinking_adapter_enabled" value="false" />
          <label>
            <input
              type="checkbox"
              name="claude.thinking_adapter_enabled"
              value="true"
              defaultChecked={value('claude.thinking_adapter_enabled') === 'true'}
            />{' '}
            {t('modelsTab.thinking')}
          </label>
        </div>
        <Field
          id={idOf(BUDGET)}
          label={t('modelsTab.budget')}
          help={t('modelsTab.budgetHelp')}
          error={errorOf(BUDGET)}
        >
          {(describedBy) => (
            <input
              id={idOf(BUDGET)}
              name={BUDGET}
              type="number"
              min={0.1}
              max={1}
              step={0.01}
              inputMode="decimal"
              defaultValue={value(BUDGET)}
              aria-describedby={describedBy || undefined}
              aria-invalid={errorOf(BUDGET) ? true : undefined}
              onChange={() => edited(BUDGET)}
              onBlur={(e) => check(BUDGET, e.currentTarget.value)}
            />
          )}
        </Field>
      </section>
      <div>
        <Button type="submit" variant="primary" name="intent" value={INTENT} isDisabled={busy}>
          {t('modelsTab.save')}
        </Button>
      </div>
    </Form>
  );
}
