/**
 * Settings "operation" tab (seed 000 §2): one option form per section (ADR 023) and the log cleanup, a GET form
 * to the /log/clear confirmation step that comes back here with 'N logs cleaned'.
 */
import { Form } from '@remix-run/react';
import { useTranslation } from 'react-i18next';
import {
  OptionForm,
  OptionInput,
  OptionJson,
  OptionSelect,
  OptionSwitch,
  OptionTextArea,
} from '#app/components/settings/option-form.tsx';
import { Button } from '#app/components/ui/button.tsx';
import type { OperationTabData } from '#app/domain/settings/operation.server.ts';
import { useTimeZone } from '#app/utils/use-time-zone.ts';

const TAB = 'operation';

export function OperationTab({ data }: { data: OperationTabData }) {
  const { t } = useTranslation('settings');
  const f = (id: string, title: string) => ({
    tab: TAB,
    id,
    title,
    data,
    saveLabel: t('operationTab.save', { section: title }),
  });
  return (
    <div className="settings-grid operation-tab">
      <OptionForm {...f('opGeneral', t('operationTab.general'))}>
        <OptionInput name="TopUpLink" type="url" label={t('operationTab.topUpLink')} />
        <OptionInput name="ChatLink" type="url" label={t('operationTab.chatLink')} />
        <OptionInput name="ChatLink2" type="url" label={t('operationTab.chatLink2')} />
        <OptionInput
          name="QuotaPerUnit"
          type="number"
          min={1}
          step="any"
          label={t('operationTab.quotaPerUnit')}
          help={t('operationTab.quotaPerUnitHelp')}
        />
        <OptionInput
          name="RetryTimes"
          type="number"
          min={0}
          step={1}
          label={t('operationTab.retryTimes')}
          help={t('operationTab.retryTimesHelp')}
        />
        <OptionSwitch name="DisplayInCurrencyEnabled" label={t('operationTab.displayInCurrency')} />
        <OptionSwitch name="DisplayTokenStatEnabled" label={t('operationTab.displayTokenStat')} />
        <OptionSwitch name="DefaultCollapseSidebar" label={t('operationTab.defaultCollapseSidebar')} />
        <OptionSwitch name="DemoSiteEnabled" label={t('operationTab.demoSite')} />
        <OptionSwitch name="SelfUseModeEnabled" label={t('operationTab.selfUseMode')} />
      </OptionForm>
      <OptionForm {...f('opQuota', t('operationTab.quota'))}>
        <OptionInput
          name="QuotaForNewUser"
          type="number"
          min={0}
          step={1}
          label={t('operationTab.quotaForNewUser')}
        />
        <OptionInput
          name="PreConsumedQuota"
          type="number"
          min={0}
          step={1}
          label={t('operationTab.preConsumedQuota')}
        />
        <OptionInput
          name="QuotaForInviter"
          type="number"
          min={0}
          step={1}
          label={t('operationTab.quotaForInviter')}
        />
        <OptionInput
          name="QuotaForInvitee"
          type="number"
          min={0}
          step={1}
          label={t('operationTab.quotaForInvitee')}
        />
      </OptionForm>
      <OptionForm {...f('opMonitoring', t('operationTab.monitoring'))}>
        <OptionInput
          name="ChannelDisableThreshold"
          type="number"
          min={0}
          step="any"
          label={t('operationTab.channelDisableThreshold')}
          help={t('operationTab.channelDisableThresholdHelp')}
        />
        <OptionInput
          name="QuotaRemindThreshold"
          type="number"
          min={0}
          step={1}
          label={t('operationTab.quotaRemindThreshold')}
          help={t('operationTab.quotaRemindThresholdHelp')}
        />
        <OptionSwitch name="AutomaticDisableChannelEnabled" label={t('operationTab.automaticDisable')} />
        <OptionSwitch name="AutomaticEnableChannelEnabled" label={t('operationTab.automaticEnable')} />
        <OptionTextArea
          name="AutomaticDisableKeywords"
          label={t('operationTab.automaticDisableKeywords')}
          help={t('operationTab.onePerLine')}
        />
      </OptionForm>
      <OptionForm {...f('opSensitive', t('operationTab.sensitive'))}>
        <OptionSwitch name="CheckSensitiveEnabled" label={t('operationTab.checkSensitive')} />
        <OptionSwitch name="CheckSensitiveOnPromptEnabled" label={t('operationTab.checkSensitiveOnPrompt')} />
        <OptionSwitch
          name="CheckSensitiveOnCompletionEnabled"
          label={t('operationTab.checkSensitiveOnCompletion')}
        />
        <OptionSwitch name="StopOnSensitiveEnabled" label={t('operationTab.stopOnSensitive')} />
        <OptionTextArea
          name="SensitiveWords"
          label={t('operationTab.sensitiveWords')}
          help={t('operationTab.onePerLine')}
        />
      </OptionForm>
      <OptionForm {...f('opLogs', t('operationTab.logs'))}>
        <OptionSwitch name="LogConsumeEnabled" label={t('operationTab.logConsume')} />
      </OptionForm>
      <ClearLogs />
      <OptionForm {...f('opGroups', t('operationTab.groups'))}>
        <OptionJson
          name="GroupRatio"
          label={t('operationTab.groupRatio')}
          help={t('operationTab.groupRatioHelp')}
        />
        <OptionJson
          name="UserUsableGroups"
          label={t('operationTab.userUsableGroups')}
          help={t('operationTab.userUsableGroupsHelp')}
        />
      </OptionForm>
      <OptionForm {...f('opChats', t('operationTab.chats'))}>
        <OptionJson
          name="Chats"
          label={t('operationTab.chatsJson')}
          help={t('operationTab.chatsHelp')}
          rows={10}
        />
      </OptionForm>
      <OptionForm {...f('opDrawing', t('operationTab.drawing'))}>
        <OptionSwitch name="DrawingEnabled" label={t('operationTab.drawingEnabled')} />
        <OptionSwitch name="MjNotifyEnabled" label={t('operationTab.mjNotify')} />
        <OptionSwitch name="MjAccountFilterEnabled" label={t('operationTab.mjAccountFilter')} />
        <OptionSwitch name="MjForwardUrlEnabled" label={t('operationTab.mjForwardUrl')} />
        <OptionSwitch name="MjModeClearEnabled" label={t('operationTab.mjModeClear')} />
        <OptionSwitch name="MjActionCheckSuccessEnabled" label={t('operationTab.mjActionCheckSuccess')} />
      </OptionForm>
      <OptionForm {...f('opDashboard', t('operationTab.dashboard'))}>
        <OptionSwitch name="DataExportEnabled" label={t('operationTab.dataExport')} />
        <OptionInput
          name="DataExportInterval"
          type="number"
          min={1}
          step={1}
          label={t('operationTab.dataExportInterval')}
          help={t('operationTab.dataExportIntervalHelp')}
        />
        <OptionSelect
          name="DataExportDefaultTime"
          label={t('operationTab.dataExportDefaultTime')}
          choices={(['hour', 'day', 'week'] as const).map((value) => ({
            value,
            label: t(`operationTab.granularity.${value}`),
          }))}
        />
      </OptionForm>
      <OptionForm {...f('opStream', t('operationTab.stream'))}>
        <OptionInput
          name="StreamCacheQueueLength"
          type="number"
          min={0}
          step={1}
          label={t('operationTab.streamCacheQueueLength')}
          help={t('operationTab.streamCacheQueueLengthHelp')}
        />
      </OptionForm>
    </div>
  );
}

/** Clearing logs before a chosen time: the /log/clear confirmation step, which comes back to this tab. */
function ClearLogs() {
  const { t } = useTranslation('settings');
  const zone = useTimeZone();
  return (
    <section className="card option-form" aria-labelledby="op-clear-logs-title">
      <h2 id="op-clear-logs-title">{t('operationTab.clearLogs')}</h2>
      <Form method="get" action="/log/clear" className="settings-form">
        <input type="hidden" name="redirectTo" value={`/setting?tab=${TAB}`} />
        <div className="option-field">
          <label htmlFor="op-clear-logs-before">{t('operationTab.clearLogsBefore', { zone })}</label>
          <input id="op-clear-logs-before" type="datetime-local" name="before" />
        </div>
        <div>
          <Button type="submit" variant="secondary">
            {t('operationTab.clearLogsSubmit')}
          </Button>
        </div>
      </Form>
    </section>
  );
}
