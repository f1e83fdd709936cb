/** Settings "ratelimit" tab (seed 000 §2): model request rate limit, one form (ADR 023). */
import { useTranslation } from 'react-i18next';
import { OptionForm, OptionInput, OptionSwitch } from '#app/components/settings/option-form.tsx';
import type { RatelimitTabData } from '#app/domain/settings/ratelimit.server.ts';

export function RatelimitTab({ data }: { data: RatelimitTabData }) {
  const { t } = useTranslation('settings');
  return (
    <OptionForm
      tab="ratelimit"
      id="ratelimit"
      title={t('ratelimitTab.title')}
      data={data}
      saveLabel={t('ratelimitTab.save')}
    >
      <OptionSwitch name="ModelRequestRateLimitEnabled" label={t('ratelimitTab.enabled')} />
      <OptionInput
        name="ModelRequestRateLimitDurationMinutes"
        type="number"
        min={0}
        step={1}
        label={t('ratelimitTab.duration')}
        help={t('ratelimitTab.durationHelp')}
      />
      <OptionInput
        name="ModelRequestRateLimitCount"
        type="number"
        min={0}
        step={1}
        label={t('ratelimitTab.count')}
        help={t('ratelimitTab.countHelp')}
      />
      <OptionInput
        name="ModelRequestRateLimitSuccessCount"
        type="number"
        min={1}
        step={1}
        label={t('ratelimitTab.successCount')}
        help={t('ratelimitTab.successCountHelp')}
      />
    </OptionForm>
  );
}
