/**
 * Every option form of the admin settings tabs, found by the intent it posts (`option:<id>`). A tab adds its
 * forms here; the page's action (app/routes/setting.tsx) hands a matching post to `optionFormAction`.
 */

import { MODELS_FORMS } from '#app/domain/settings/models-settings.server.ts';
import { OPERATION_FORMS } from '#app/domain/settings/operation.server.ts';
import { OPTION_INTENT_PREFIX, type OptionFormSpec } from '#app/domain/settings/option-form.server.ts';
import { OTHER_FORMS } from '#app/domain/settings/other.server.ts';
import { PAY_FORMS } from '#app/domain/settings/pay.server.ts';
import { RATELIMIT_FORMS } from '#app/domain/settings/ratelimit.server.ts';
import { SYSTEM_FORMS } from '#app/domain/settings/system.server.ts';

export const OPTION_FORMS: readonly OptionFormSpec[] = [
  ...RATELIMIT_FORMS,
  ...OTHER_FORMS,
  ...PAY_FORMS,
  ...OPERATION_FORMS,
  ...SYSTEM_FORMS,
  ...MODELS_FORMS,
];

export function findOptionForm(intent: string): OptionFormSpec | null {
  if (!intent.startsWith(OPTION_INTENT_PREFIX)) return null;
  const id = intent.slice(OPTION_INTENT_PREFIX.length);
  return OPTION_FORMS.find((f) => f.id === id) ?? null;
}
