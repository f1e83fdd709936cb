import { Dialog, DialogTrigger, Heading, Modal, ModalOverlay } from 'react-aria-components';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import { type TaskWire, taskDuration, taskStatusKey } from '#app/domain/tasks/constants.ts';
import { useHydrated } from '#app/utils/hydrated.ts';
import { formatTimestamp } from '#app/utils/time.ts';
import { useTimeZone } from '#app/utils/use-time-zone.ts';

/** Presentational pieces of the /task page (client-safe: no server imports). */

/** Finished states are coloured like the log tones; waiting and running ones orange; the rest plain. */
const STATUS_TONE: Record<string, string> = {
  success: 'log-tone-green',
  failure: 'log-tone-red',
  inProgress: 'log-tone-orange',
  submitted: 'log-tone-orange',
  queued: 'log-tone-orange',
};

export function TaskStatusTag({ status }: { status: string }) {
  const { t } = useTranslation('tasks');
  const key = taskStatusKey(status);
  return (
    <span className={`badge task-status ${STATUS_TONE[key] ?? ''}`} data-status={status || 'submitting'}>
      {t(`status.${key}`)}
    </span>
  );
}

/** The full record as indented JSON (data and properties included). */
function RecordText({ task }: { task: TaskWire }) {
  return (
    <pre className="task-record" data-testid="task-record">
      {JSON.stringify(task, null, 2)}
    </pre>
  );
}

/**
 * The task ID cell: without JavaScript a disclosure (<details>) shows the full record in place; with it, the
 * id is a button opening a dialog with the record.
 */
export function TaskIdCell({ task }: { task: TaskWire }) {
  const { t } = useTranslation('tasks');
  const hydrated = useHydrated();
  if (!hydrated) {
    return (
      <details className="task-record-details">
        <summary aria-label={t('record.show', { id: task.task_id })}>{task.task_id}</summary>
        <RecordText task={task} />
      </details>
    );
  }
  return (
    <DialogTrigger>
      <Button variant="ghost" className="task-id-button" aria-label={t('record.show', { id: task.task_id })}>
        {task.task_id}
      </Button>
      <ModalOverlay isDismissable className="list-overlay">
        <Modal className="list-dialog">
          <Dialog>
            {({ close }) => (
              <>
                <Heading slot="title">{t('record.title')}</Heading>
                <RecordText task={task} />
                <div className="logs-dialog-actions">
                  <Button onPress={close}>{t('record.close')}</Button>
                </div>
              </>
            )}
          </Dialog>
        </Modal>
      </ModalOverlay>
    </DialogTrigger>
  );
}

export function TaskRow({ task, admin }: { task: TaskWire; admin: boolean }) {
  const { t } = useTranslation('tasks');
  const timeZone = useTimeZone();
  const duration = taskDuration(task);
  const platformKey = task.platform === 'suno' ? 'suno' : 'unknown';
  const actionKey = task.action === 'MUSIC' || task.action === 'LYRICS' ? task.action : 'unknown';
  return (
    <tr data-task-id={task.task_id}>
      <td>{formatTimestamp(task.submit_time || null, timeZone)}</td>
      <td data-testid="task-finish">
        {task.finish_time ? formatTimestamp(task.finish_time, timeZone) : '-'}
      </td>
      <td data-testid="task-progress">{task.progress || '-'}</td>
      <td data-testid="task-duration">{duration === null ? '-' : t('duration', { seconds: duration })}</td>
      {admin ? <td data-testid="task-channel">{task.channel_id || '-'}</td> : null}
      <td>{t(`platform.${platformKey}`)}</td>
      <td>{t(`action.${actionKey}`)}</td>
      <td>
        <TaskIdCell task={task} />
      </td>
      <td>
        <TaskStatusTag status={task.status} />
      </td>
      <td className="log-content" data-testid="task-fail-reason">
        {task.fail_reason}
      </td>
    </tr>
  );
}
