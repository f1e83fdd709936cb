/**
 * Settings "models" tab (seed 000 §2): Gemini settings and Claude settings, two option forms (ADR 023) that work
 * without JavaScript. With JavaScript the JSON text areas are checked on blur ('not a valid JSON string', seed
 * 000 §5) and the budget percentage against 0.1–1; the server checks both again on save.
 */
import { useTranslation } from 'react-i18next';
import { OptionForm, OptionInput, OptionJson, OptionSwitch } from '#app/components/settings/option-form.tsx';
import type { ModelsSettingsData } from '#app/domain/settings/models-settings.server.ts';

export function ModelsTab({ data }: { data: ModelsSettingsData }) {
  const { t } = useTranslation('settings');
  return (
    <div className="models-tab">
      <OptionForm
        tab="models"
        id="models-gemini"
        title={t('modelsTab.geminiTitle')}
        data={data}
        saveLabel={t('modelsTab.saveGemini')}
      >
        <OptionJson
          name="gemini.safety_settings"
          label={t('modelsTab.safety')}
          help={t('modelsTab.safetyHelp', { values: data.thresholds.join(', ') })}
        />
        <OptionJson
          name="gemini.version_settings"
          label={t('modelsTab.version')}
          help={t('modelsTab.versionHelp', { values: data.versions.join(', ') })}
        />
      </OptionForm>
      <OptionForm
        tab="models"
        id="models-claude"
        title={t('modelsTab.claudeTitle')}
        data={data}
        saveLabel={t('modelsTab.saveClaude')}
      >
        <OptionJson
          name="claude.model_headers_settings"
          label={t('modelsTab.headers')}
          help={t('modelsTab.headersHelp')}
        />
        <OptionJson
          name="claude.default_max_tokens"
          label={t('modelsTab.maxTokens')}
          help={t('modelsTab.maxTokensHelp')}
        />
        <OptionSwitch name="claude.thinking_adapter_enabled" label={t('modelsTab.thinking')} />
        <OptionInput
          name="claude.thinking_adapter_budget_tokens_percentage"
          type="number"
          min={0.1}
          max={1}
          step={0.01}
          label={t('modelsTab.budget')}
          help={t('modelsTab.budgetHelp')}
          rangeMessage={t('modelsTab.errors.budgetRange')}
        />
      </OptionForm>
    </div>
  );
}
