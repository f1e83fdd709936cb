/**
 * Settings "ratelimit" tab (seed 000 §2, §3, §5, §9): model request rate limit. Bounds are the registry's:
 * period in minutes >= 0, requests per period >= 0 (0 = unlimited; failures count too), successful requests
 * per period >= 1. Defaults: off, 0, 1000, 1 minute.
 */
import type { OptionService } from '@switchyard/db/options/service.ts';
import type { SessionUser } from '#app/domain/auth/session.server.ts';
import {
  loadOptionForms,
  type OptionFormSpec,
  type OptionFormValues,
} from '#app/domain/settings/option-form.server.ts';

export const RATELIMIT_FORMS = [
  {
    tab: 'ratelimit',
    id: 'ratelimit',
    keys: [
      'ModelRequestRateLimitEnabled',
      'ModelRequestRateLimitDurationMinutes',
      'ModelRequestRateLimitCount',
      'ModelRequestRateLimitSuccessCount',
    ],
    saved: 'ratelimitTab.saved',
  },
] as const satisfies readonly OptionFormSpec[];

export type RatelimitTabData = OptionFormValues;

export function loadRatelimitTab(
  options: Pick<OptionService, 'getRaw'>,
  viewer: Pick<SessionUser, 'role'>,
): RatelimitTabData {
  return loadOptionForms(options, RATELIMIT_FORMS, viewer);
}
