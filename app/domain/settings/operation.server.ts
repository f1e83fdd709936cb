/**
 * Settings "operation" tab (seed 000 §2 "operation tab", §3 Option defaults, §5): one option form per section,
 * each with its own save button and confirmation (ADR 023): general, quota, monitoring, sensitive words, logs
 * (LogConsumeEnabled; clearing logs before a chosen time is the /log/clear confirmation step, reached from this
 * tab), group ratios and usable groups (JSON, checked by the registry on save), chats (JSON), drawing, data
 * dashboard (DataExportInterval >= 1 minute) and the stream cache queue length. Bounds and defaults are the
 * registry's (db/src/options/registry.ts).
 */
import type { OptionService } from '@switchyard/db/options/service.ts';
import type { SessionUser } from '#app/domain/auth/session.server.ts';
import {
  loadOptionForms,
  type OptionFormSpec,
  type OptionFormValues,
} from '#app/domain/settings/option-form.server.ts';

export const OPERATION_FORMS = [
  {
    tab: 'operation',
    id: 'opGeneral',
    keys: [
      'TopUpLink',
      'ChatLink',
      'ChatLink2',
      'QuotaPerUnit',
      'RetryTimes',
      'DisplayInCurrencyEnabled',
      'DisplayTokenStatEnabled',
      'DefaultCollapseSidebar',
      'DemoSiteEnabled',
      'SelfUseModeEnabled',
    ],
    saved: 'operationTab.saved.general',
  },
  {
    tab: 'operation',
    id: 'opQuota',
    keys: ['QuotaForNewUser', 'PreConsumedQuota', 'QuotaForInviter', 'QuotaForInvitee'],
    saved: 'operationTab.saved.quota',
  },
  {
    tab: 'operation',
    id: 'opMonitoring',
    keys: [
      'ChannelDisableThreshold',
      'QuotaRemindThreshold',
      'AutomaticDisableChannelEnabled',
      'AutomaticEnableChannelEnabled',
      'AutomaticDisableKeywords',
    ],
    saved: 'operationTab.saved.monitoring',
  },
  {
    tab: 'operation',
    id: 'opSensitive',
    keys: [
      'CheckSensitiveEnabled',
      'CheckSensitiveOnPromptEnabled',
      'CheckSensitiveOnCompletionEnabled',
      'StopOnSensitiveEnabled',
      'SensitiveWords',
    ],
    saved: 'operationTab.saved.sensitive',
  },
  { tab: 'operation', id: 'opLogs', keys: ['LogConsumeEnabled'], saved: 'operationTab.saved.logs' },
  {
    tab: 'operation',
    id: 'opGroups',
    keys: ['GroupRatio', 'UserUsableGroups'],
    saved: 'operationTab.saved.groups',
  },
  { tab: 'operation', id: 'opChats', keys: ['Chats'], saved: 'operationTab.saved.chats' },
  {
    tab: 'operation',
    id: 'opDrawing',
    keys: [
      'DrawingEnabled',
      'MjNotifyEnabled',
      'MjAccountFilterEnabled',
      'MjForwardUrlEnabled',
      'MjModeClearEnabled',
      'MjActionCheckSuccessEnabled',
    ],
    saved: 'operationTab.saved.drawing',
  },
  {
    tab: 'operation',
    id: 'opDashboard',
    keys: ['DataExportEnabled', 'DataExportInterval', 'DataExportDefaultTime'],
    saved: 'operationTab.saved.dashboard',
  },
  {
    tab: 'operation',
    id: 'opStream',
    keys: ['StreamCacheQueueLength'],
    saved: 'operationTab.saved.stream',
  },
] as const satisfies readonly OptionFormSpec[];

export type OperationTabData = OptionFormValues;

export function loadOperationTab(
  options: Pick<OptionService, 'getRaw'>,
  viewer: Pick<SessionUser, 'role'>,
): OperationTabData {
  return loadOptionForms(options, OPERATION_FORMS, viewer);
}
