/**
 * Settings "other" tab (seed 000 §2): system information with the update check, then one form per branding
 * option, each with its own save button and confirmation (ADR 023). The update check is a POST form too, so it
 * works without JavaScript; its answer is shown under the button.
 */
import { Form, useActionData, useNavigation } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import { OptionForm, OptionInput, OptionTextArea } from '#app/components/settings/option-form.tsx';
import { Button } from '#app/components/ui/button.tsx';
import type { OtherTabData, UpdateCheck } from '#app/domain/settings/other.server.ts';
import { formatTimestamp } from '#app/utils/time.ts';
import { useTimeZone } from '#app/utils/use-time-zone.ts';

const CHECK_UPDATE = 'checkUpdate';

export type CheckUpdateReply = { intent: typeof CHECK_UPDATE; update: UpdateCheck };

function UpdateResult({ update }: { update: UpdateCheck }) {
  const { t } = useTranslation('settings');
  if (update.kind === 'unconfigured')
    return (
      <p role="status" data-testid="update-result">
        {t('otherTab.updateUnconfigured')}
      </p>
    );
  if (update.kind === 'failed')
    return (
      <p className="form-error" role="alert" data-testid="update-result">
        {t('otherTab.updateFailed')}
      </p>
    );
  if (update.kind === 'latest')
    return (
      <p role="status" data-testid="update-result">
        {t('otherTab.latest')}
      </p>
    );
  return (
    <div role="status" data-testid="update-result">
      <p>
        <strong>{t('otherTab.newer', { tag: update.tag, current: update.current })}</strong>
        {update.url ? (
          <>
            {' '}
            <a href={update.url} target="_blank" rel="noreferrer noopener">
              {t('otherTab.releaseLink')}
            </a>
          </>
        ) : null}
      </p>
      {update.notes ? <pre className="release-notes">{update.notes}</pre> : null}
    </div>
  );
}

function SystemInfo({ data }: { data: OtherTabData }) {
  const { t } = useTranslation('settings');
  const raw = useActionData() as CheckUpdateReply | undefined;
  const reply = raw?.intent === CHECK_UPDATE && raw.update ? raw : undefined;
  const navigation = useNavigation();
  const busy = navigation.state !== 'idle' && navigation.formData?.get('intent') === CHECK_UPDATE;
  const started = new Date(data.startTime * 1000);
  const timeZone = useTimeZone();
  return (
    <section className="card" aria-labelledby="other-info-title">
      <h2 id="other-info-title">{t('otherTab.systemInfo')}</h2>
      <dl className="kv">
        <dt>{t('otherTab.version')}</dt>
        <dd data-testid="system-version">{data.version}</dd>
        <dt>{t('otherTab.startTime')}</dt>
        <dd>
          <time dateTime={started.toISOString()}>{formatTimestamp(data.startTime, timeZone)}</time>
        </dd>
      </dl>
      <Form method="post" action="/setting?tab=other" className="inline">
        <Button type="submit" name="intent" value={CHECK_UPDATE} isDisabled={busy}>
          {t('otherTab.checkUpdate')}
        </Button>
      </Form>
      {reply ? <UpdateResult update={reply.update} /> : null}
    </section>
  );
}

export function OtherTab({ data }: { data: OtherTabData }) {
  const { t } = useTranslation('settings');
  return (
    <div className="settings-grid other-tab">
      <SystemInfo data={data} />
      <OptionForm
        tab="other"
        id="notice"
        title={t('otherTab.general')}
        data={data}
        saveLabel={t('otherTab.saveNotice')}
      >
        <OptionTextArea name="Notice" label={t('otherTab.notice')} help={t('otherTab.noticeHelp')} />
      </OptionForm>
      <OptionForm
        tab="other"
        id="apiAddressList"
        title={t('otherTab.apiAddressList')}
        data={data}
        saveLabel={t('otherTab.saveApiAddressList')}
      >
        <OptionTextArea
          name="apiAddressList"
          label={t('otherTab.apiAddressList')}
          help={t('otherTab.apiAddressListHelp')}
        />
      </OptionForm>
      <OptionForm
        tab="other"
        id="systemName"
        title={t('otherTab.systemName')}
        data={data}
        saveLabel={t('otherTab.saveSystemName')}
      >
        <OptionInput name="SystemName" label={t('otherTab.systemName')} />
      </OptionForm>
      <OptionForm
        tab="other"
        id="logo"
        title={t('otherTab.logo')}
        data={data}
        saveLabel={t('otherTab.saveLogo')}
      >
        <OptionInput name="Logo" label={t('otherTab.logo')} help={t('otherTab.logoHelp')} />
      </OptionForm>
      <OptionForm
        tab="other"
        id="homePageContent"
        title={t('otherTab.homePageContent')}
        data={data}
        saveLabel={t('otherTab.saveHomePageContent')}
      >
        <OptionTextArea
          name="HomePageContent"
          label={t('otherTab.homePageContent')}
          help={t('otherTab.homePageContentHelp')}
          rows={10}
        />
      </OptionForm>
      <OptionForm
        tab="other"
        id="about"
        title={t('otherTab.about')}
        data={data}
        saveLabel={t('otherTab.saveAbout')}
      >
        <OptionTextArea name="About" label={t('otherTab.about')} help={t('otherTab.aboutHelp')} rows={10} />
      </OptionForm>
      <OptionForm
        tab="other"
        id="footer"
        title={t('otherTab.footer')}
        data={data}
        saveLabel={t('otherTab.saveFooter')}
      >
        <OptionTextArea name="Footer" label={t('otherTab.footer')} help={t('otherTab.footerHelp')} />
      </OptionForm>
    </div>
  );
}
