/**
 * The playground's left panel (seed 001 §2.14): group, model, temperature, max tokens, system prompt. Native
 * controls inside the page's form, so they post without JavaScript; with it the temperature is a react-aria
 * Slider (0.1 to 1, step 0.1) and changing the group lists its models at once (without JavaScript a "switch
 * group" button posts the form to list them).
 */

import { Label, Slider, SliderOutput, SliderThumb, SliderTrack } from 'react-aria-components';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import {
  clampTemperature,
  defaultModel,
  MAX_MESSAGE_CHARS,
  MAX_TOKENS_LIMIT,
  type PlaygroundSettings,
  TEMPERATURE,
} from '#app/domain/playground/constants.ts';
import type { PlaygroundGroup } from '#app/domain/playground/page.server.ts';

export function SettingsPanel({
  groups,
  models,
  settings,
  onChange,
  hydrated,
}: {
  groups: PlaygroundGroup[];
  models: Record<string, string[]>;
  settings: PlaygroundSettings;
  onChange: (next: PlaygroundSettings) => void;
  hydrated: boolean;
}) {
  const { t } = useTranslation('playground');
  const groupModels = models[settings.group] ?? [];
  const set = <K extends keyof PlaygroundSettings>(key: K, value: PlaygroundSettings[K]) =>
    onChange({ ...settings, [key]: value });
  return (
    <section className="pg-panel" aria-labelledby="pg-settings-heading">
      <h2 id="pg-settings-heading">{t('settings.heading')}</h2>

      <div className="pg-field">
        <label htmlFor="pg-group">{t('settings.group')}</label>
        <div className="pg-inline">
          <select
            id="pg-group"
            name="group"
            value={settings.group}
            onChange={(e) => {
              const group = e.currentTarget.value;
              onChange({ ...settings, group, model: defaultModel(models[group] ?? []) });
            }}
          >
            {groups.map((g) => (
              <option key={g.name} value={g.name}>
                {g.desc && g.desc !== g.name ? `${g.name} (${g.desc})` : g.name}
              </option>
            ))}
          </select>
          {hydrated ? null : (
            <Button type="submit" name="intent" value="group">
              {t('settings.applyGroup')}
            </Button>
          )}
        </div>
      </div>

      <div className="pg-field">
        <label htmlFor="pg-model">{t('settings.model')}</label>
        {groupModels.length === 0 ? (
          <p className="pg-hint" id="pg-model-none" role="status">
            {t('settings.noModels')}
          </p>
        ) : null}
        <select
          id="pg-model"
          name="model"
          value={settings.model}
          disabled={groupModels.length === 0}
          aria-describedby={groupModels.length === 0 ? 'pg-model-none' : undefined}
          onChange={(e) => set('model', e.currentTarget.value)}
        >
          {groupModels.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
      </div>

      <div className="pg-field">
        {hydrated ? (
          <Slider
            className="pg-slider"
            value={settings.temperature}
            minValue={TEMPERATURE.min}
            maxValue={TEMPERATURE.max}
            step={TEMPERATURE.step}
            formatOptions={{ minimumFractionDigits: 1, maximumFractionDigits: 1 }}
            onChange={(v) => set('temperature', clampTemperature(v))}
            aria-describedby="pg-temperature-hint"
          >
            <div className="pg-slider-head">
              <Label>{t('settings.temperature')}</Label>
              <SliderOutput data-testid="pg-temperature" />
            </div>
            <SliderTrack className="pg-slider-track">
              {({ state }) => (
                <>
                  <div className="pg-slider-fill" style={{ width: `${state.getThumbPercent(0) * 100}%` }} />
                  <SliderThumb className="pg-slider-thumb" name="temperature" />
                </>
              )}
            </SliderTrack>
          </Slider>
        ) : (
          <>
            <label htmlFor="pg-temperature">{t('settings.temperature')}</label>
            <input
              id="pg-temperature"
              name="temperature"
              type="number"
              inputMode="decimal"
              min={TEMPERATURE.min}
              max={TEMPERATURE.max}
              step={TEMPERATURE.step}
              defaultValue={settings.temperature}
              aria-describedby="pg-temperature-hint"
            />
          </>
        )}
        <p className="pg-hint" id="pg-temperature-hint">
          {t('settings.temperatureHint')}
        </p>
      </div>

      <div className="pg-field">
        <label htmlFor="pg-max-tokens">{t('settings.maxTokens')}</label>
        <input
          id="pg-max-tokens"
          name="max_tokens"
          type="number"
          inputMode="numeric"
          min={0}
          max={MAX_TOKENS_LIMIT}
          step={1}
          value={settings.max_tokens}
          onChange={(e) => {
            const n = Number.parseInt(e.currentTarget.value, 10);
            set('max_tokens', Number.isFinite(n) ? Math.min(MAX_TOKENS_LIMIT, Math.max(0, n)) : 0);
          }}
          aria-describedby="pg-max-tokens-hint"
        />
        <p className="pg-hint" id="pg-max-tokens-hint">
          {t('settings.maxTokensHint')}
        </p>
      </div>

      <div className="pg-field">
        <label htmlFor="pg-system">{t('settings.system')}</label>
        <textarea
          id="pg-system"
          name="system"
          rows={4}
          maxLength={MAX_MESSAGE_CHARS}
          value={settings.system}
          onChange={(e) => set('system', e.currentTarget.value)}
        />
      </div>
    </section>
  );
}
