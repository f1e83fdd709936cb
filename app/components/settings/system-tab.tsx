/**
 * Settings "system" tab (seed 000 §2): general, login and registration (disabling password login is confirmed
 * first), e-mail domain restriction, SMTP with "send test mail", GitHub, LinuxDO, WeChat, Telegram and Turnstile;
 * one option form each (ADR 023). The test mail is a POST form too, so it works without JavaScript.
 */
import { Form, useActionData, useNavigation } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import {
  OptionForm,
  OptionInput,
  OptionSecret,
  OptionSwitch,
} from '#app/components/settings/option-form.tsx';
import { Button } from '#app/components/ui/button.tsx';
import type { SystemTabData, TestMailReply } from '#app/domain/settings/system.server.ts';

const TEST_MAIL = 'systemTestMail';

function TestMail() {
  const { t } = useTranslation('settings');
  const raw = useActionData() as TestMailReply | undefined;
  const reply = raw?.intent === TEST_MAIL ? raw : undefined;
  const navigation = useNavigation();
  const busy = navigation.state !== 'idle' && navigation.formData?.get('intent') === TEST_MAIL;
  return (
    <Form method="post" action="/setting?tab=system" className="test-mail">
      <Button type="submit" name="intent" value={TEST_MAIL} isDisabled={busy}>
        {t('systemTab.testMail')}
      </Button>{' '}
      <span className="field-hint">{t('systemTab.testMailHelp')}</span>
      {reply?.sent ? (
        <p role="status" data-testid="test-mail-result">
          {reply.sent}
        </p>
      ) : null}
      {reply?.error ? (
        <p className="form-error" role="alert" data-testid="test-mail-result">
          {reply.error}
        </p>
      ) : null}
    </Form>
  );
}

export function SystemTab({ data }: { data: SystemTabData }) {
  const { t } = useTranslation('settings');
  return (
    <div className="settings-grid system-tab">
      <OptionForm
        tab="system"
        id="systemGeneral"
        title={t('systemTab.general')}
        data={data}
        saveLabel={t('systemTab.saveGeneral')}
      >
        <OptionInput
          name="ServerAddress"
          type="url"
          label={t('systemTab.serverAddress')}
          help={t('systemTab.serverAddressHelp')}
        />
        <OptionInput
          name="WorkerUrl"
          type="url"
          label={t('systemTab.workerUrl')}
          help={t('systemTab.workerUrlHelp')}
        />
        <OptionSecret name="WorkerValidKey" label={t('systemTab.workerValidKey')} />
      </OptionForm>
      <OptionForm
        tab="system"
        id="systemLogin"
        title={t('systemTab.login')}
        data={data}
        saveLabel={t('systemTab.saveLogin')}
        confirmStep={{
          title: t('systemTab.confirmTitle'),
          confirm: t('systemTab.confirmDisable'),
          cancel: t('systemTab.cancel'),
        }}
      >
        <OptionSwitch name="PasswordLoginEnabled" label={t('systemTab.passwordLogin')} />
        <OptionSwitch name="PasswordRegisterEnabled" label={t('systemTab.passwordRegister')} />
        <OptionSwitch name="EmailVerificationEnabled" label={t('systemTab.emailVerification')} />
        <OptionSwitch name="RegisterEnabled" label={t('systemTab.register')} />
        <OptionSwitch name="GitHubOAuthEnabled" label={t('systemTab.githubOAuth')} />
        <OptionSwitch name="LinuxDOOAuthEnabled" label={t('systemTab.linuxdoOAuth')} />
        <OptionSwitch name="WeChatAuthEnabled" label={t('systemTab.wechatAuth')} />
        <OptionSwitch name="TelegramOAuthEnabled" label={t('systemTab.telegramOAuth')} />
        <OptionSwitch name="TurnstileCheckEnabled" label={t('systemTab.turnstile')} />
      </OptionForm>
      <OptionForm
        tab="system"
        id="systemEmailDomain"
        title={t('systemTab.emailDomain')}
        data={data}
        saveLabel={t('systemTab.saveEmailDomain')}
      >
        <p className="field-hint">{t('systemTab.emailDomainHelp')}</p>
        <OptionSwitch name="EmailDomainRestrictionEnabled" label={t('systemTab.emailDomainRestriction')} />
        <OptionSwitch name="EmailAliasRestrictionEnabled" label={t('systemTab.emailAliasRestriction')} />
        <OptionInput
          name="EmailDomainWhitelist"
          label={t('systemTab.emailDomainWhitelist')}
          help={t('systemTab.emailDomainWhitelistHelp')}
        />
      </OptionForm>
      <OptionForm
        tab="system"
        id="systemSmtp"
        title={t('systemTab.smtp')}
        data={data}
        saveLabel={t('systemTab.saveSmtp')}
        after={<TestMail />}
      >
        <p className="field-hint">{t('systemTab.smtpHelp')}</p>
        <OptionInput name="SMTPServer" label={t('systemTab.smtpServer')} />
        <OptionInput
          name="SMTPPort"
          type="number"
          min={1}
          step={1}
          label={t('systemTab.smtpPort')}
          help={t('systemTab.smtpPortHelp')}
        />
        <OptionInput name="SMTPAccount" label={t('systemTab.smtpAccount')} />
        <OptionInput name="SMTPFrom" label={t('systemTab.smtpFrom')} help={t('systemTab.smtpFromHelp')} />
        <OptionSecret name="SMTPToken" label={t('systemTab.smtpToken')} />
        <OptionSwitch name="SMTPSSLEnabled" label={t('systemTab.smtpSsl')} />
      </OptionForm>
      <OptionForm
        tab="system"
        id="systemGitHub"
        title={t('systemTab.github')}
        data={data}
        saveLabel={t('systemTab.saveGithub')}
      >
        <p className="field-hint">{t('systemTab.githubHelp')}</p>
        <OptionInput name="GitHubClientId" label={t('systemTab.githubClientId')} />
        <OptionSecret name="GitHubClientSecret" label={t('systemTab.githubClientSecret')} />
      </OptionForm>
      <OptionForm
        tab="system"
        id="systemLinuxDO"
        title={t('systemTab.linuxdo')}
        data={data}
        saveLabel={t('systemTab.saveLinuxdo')}
      >
        <p className="field-hint">{t('systemTab.linuxdoHelp')}</p>
        <OptionInput name="LinuxDOClientId" label={t('systemTab.linuxdoClientId')} />
        <OptionSecret name="LinuxDOClientSecret" label={t('systemTab.linuxdoClientSecret')} />
      </OptionForm>
      <OptionForm
        tab="system"
        id="systemWeChat"
        title={t('systemTab.wechat')}
        data={data}
        saveLabel={t('systemTab.saveWechat')}
      >
        <OptionInput name="WeChatServerAddress" type="url" label={t('systemTab.wechatServerAddress')} />
        <OptionSecret name="WeChatServerToken" label={t('systemTab.wechatServerToken')} />
        <OptionInput name="WeChatAccountQRCodeImageURL" type="url" label={t('systemTab.wechatQr')} />
      </OptionForm>
      <OptionForm
        tab="system"
        id="systemTelegram"
        title={t('systemTab.telegram')}
        data={data}
        saveLabel={t('systemTab.saveTelegram')}
      >
        <OptionInput name="TelegramBotName" label={t('systemTab.telegramBotName')} />
        <OptionSecret name="TelegramBotToken" label={t('systemTab.telegramBotToken')} />
      </OptionForm>
      <OptionForm
        tab="system"
        id="systemTurnstile"
        title={t('systemTab.turnstileTitle')}
        data={data}
        saveLabel={t('systemTab.saveTurnstile')}
      >
        <OptionInput name="TurnstileSiteKey" label={t('systemTab.turnstileSiteKey')} />
        <OptionSecret name="TurnstileSecretKey" label={t('systemTab.turnstileSecretKey')} />
      </OptionForm>
    </div>
  );
}
