/**
 * Settings "models" tab (seed 000 §2: Gemini settings and Claude settings): the six claude.* / gemini.* options
 * that the relay hands to its adaptors, as two option forms on the shared mechanics of ADR 023
 * (app/domain/settings/option-form.server.ts): only the changed keys are saved, each through `updateOption`
 * (registry validation, audit with the actor, announcement to the relays), after every key of the form was checked
 * so a refusal writes nothing; 'you seem to have changed nothing', 'partial save failed, please retry'.
 */
import {
  GEMINI_API_VERSIONS,
  GEMINI_SAFETY_THRESHOLDS,
  OPTIONS,
  type OptionKey,
} from '@switchyard/db/options/registry.ts';
import type { OptionService } from '@switchyard/db/options/service.ts';
import type { SessionUser } from '#app/domain/auth/session.server.ts';
import {
  loadOptionForms,
  type OptionFormSpec,
  type OptionFormValues,
} from '#app/domain/settings/option-form.server.ts';

const BUDGET = 'claude.thinking_adapter_budget_tokens_percentage';

export const MODELS_FORMS = [
  {
    tab: 'models',
    id: 'models-gemini',
    keys: ['gemini.safety_settings', 'gemini.version_settings'],
    saved: 'modelsTab.geminiSaved',
  },
  {
    tab: 'models',
    id: 'models-claude',
    keys: [
      'claude.model_headers_settings',
      'claude.default_max_tokens',
      'claude.thinking_adapter_enabled',
      BUDGET,
    ],
    saved: 'modelsTab.claudeSaved',
    // The registry's bounds (0.1–1) said as one range, as the blur check says it.
    messages: { [BUDGET]: 'modelsTab.errors.budgetRange' },
  },
] as const satisfies readonly OptionFormSpec[];

export const MODELS_KEYS: readonly OptionKey[] = MODELS_FORMS.flatMap((f) => f.keys);

/** The tab's values as text (JSON pretty-printed for the text areas) and the choices its help texts name. */
export type ModelsSettingsData = OptionFormValues & {
  thresholds: readonly string[];
  versions: readonly string[];
};

export function loadModelsSettings(
  options: Pick<OptionService, 'get' | 'getRaw'>,
  viewer: Pick<SessionUser, 'role'>,
): ModelsSettingsData {
  const form = loadOptionForms(options, MODELS_FORMS, viewer);
  for (const key of MODELS_KEYS)
    if (OPTIONS[key].type === 'json') form.values[key] = JSON.stringify(options.get(key), null, 2);
  return { ...form, thresholds: GEMINI_SAFETY_THRESHOLDS, versions: GEMINI_API_VERSIONS };
}
