import { useFetcher } from '@remix-run/react';
import { useEffect, useRef, useState } from 'react';
import { Dialog, DialogTrigger, Heading, Modal, ModalOverlay } from 'react-aria-components';
import { useTranslation } from 'react-i18next';
import { ListErrorBoundary } from '#app/components/list/error-boundary.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import { formatQuota, type QuotaDisplay } from '#app/domain/account/quota-format.ts';
import {
  formatLogTime,
  frtTone,
  type LogDetails,
  type LogUserInfo,
  type LogWire,
  logTypeKey,
  parseOther,
  type Tone,
  useTimeTone,
} from '#app/domain/logs/constants.ts';
import { localizeLogContent } from '#app/domain/logs/log-content.ts';
import { useHydrated } from '#app/utils/hydrated.ts';

/** Presentational pieces of the /log pages (client-safe: no server imports). */

export function ToneTag({ tone, children, testId }: { tone: Tone; children: string; testId?: string }) {
  return (
    <span className={`badge log-tone log-tone-${tone}`} data-tone={tone} data-testid={testId}>
      {children}
    </span>
  );
}

export function LogTypeTag({ type }: { type: number }) {
  const { t } = useTranslation('logs');
  const key = logTypeKey(type);
  return (
    <span className={`badge log-type log-type-${key}`} data-type={key}>
      {t(`type.${key}`)}
    </span>
  );
}

/**
 * A name that copies itself on click (seed 001 §2.10) with JavaScript, announcing the result in a live region;
 * without JavaScript it is plain, selectable text.
 */
export function CopyText({ text }: { text: string }) {
  const { t } = useTranslation('logs');
  const hydrated = useHydrated();
  const [status, setStatus] = useState('');
  if (!text) return <span>-</span>;
  if (!hydrated) return <span className="log-copy-text">{text}</span>;
  return (
    <>
      <button
        type="button"
        className="log-copy"
        title={t('copy.copy', { text })}
        onClick={async () => {
          try {
            await navigator.clipboard.writeText(text);
            setStatus(t('copy.copied', { text }));
          } catch {
            setStatus(t('copy.failed', { text }));
          }
          setTimeout(() => setStatus(''), 2500);
        }}
      >
        {text}
      </button>
      <span role="status" className="log-copy-status" data-testid="copy-status">
        {status}
      </span>
    </>
  );
}

/** A log's content in the reader's language (the relay's price text and the channel-test mark translated). */
export function LogContent({ content }: { content: string }) {
  const { t } = useTranslation('logs');
  return <>{localizeLogContent(content, t)}</>;
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(1);
}

/** Time used (response-time colours) and, for streams, the first-token time (its own colours). */
export function UseTimeCell({ log, details }: { log: LogWire; details: LogDetails }) {
  const { t } = useTranslation('logs');
  if (log.type !== 2) return null;
  return (
    <div className="log-usetime">
      <ToneTag tone={useTimeTone(log.use_time)} testId="use-time">
        {t('row.seconds', { n: log.use_time })}
      </ToneTag>
      {log.is_stream && details.frt !== undefined && details.frt > 0 ? (
        <ToneTag tone={frtTone(details.frt)} testId="frt">
          {t('row.frt', { n: seconds(details.frt) })}
        </ToneTag>
      ) : null}
      <span className="badge log-stream">{t(log.is_stream ? 'row.stream' : 'row.notStream')}</span>
    </div>
  );
}

/** The model: the billed name, and the upstream one next to it when the channel mapped it. */
export function ModelCell({ log, details }: { log: LogWire; details: LogDetails }) {
  const { t } = useTranslation('logs');
  if (!log.model_name) return <span>-</span>;
  if (!details.isModelMapped || !details.upstreamModelName) return <CopyText text={log.model_name} />;
  return (
    <div
      className="log-model-mapped"
      title={t('row.mappedTitle', { billed: log.model_name, upstream: details.upstreamModelName })}
    >
      <CopyText text={log.model_name} />
      <span aria-hidden="true"> → </span>
      <span data-testid="upstream-model">{details.upstreamModelName}</span>
    </div>
  );
}

function ratio(n: number | undefined): string {
  return n === undefined ? '' : String(Number(n.toFixed(6)));
}

/**
 * The expandable part of a row (a <details>, so it opens without JavaScript): the summary text, billed vs
 * upstream model, timings, token breakdown, ratios or the fixed price, and (admin) the retry path.
 */
export function LogDetailsPanel({
  log,
  details,
  admin,
}: {
  log: LogWire;
  details: LogDetails;
  admin: boolean;
}) {
  const { t } = useTranslation('logs');
  const rows: [string, string, string][] = [];
  const add = (key: string, value: string | undefined, testId = key) => {
    if (value !== undefined && value !== '') rows.push([t(`details.${key}`), value, testId]);
  };
  if (log.type === 2) {
    add('billedModel', log.model_name);
    if (details.isModelMapped) add('upstreamModel', details.upstreamModelName);
    add('useTime', t('row.seconds', { n: log.use_time }));
    if (details.frt !== undefined && details.frt > 0)
      add('frt', t('row.seconds', { n: seconds(details.frt) }));
    add('stream', t(log.is_stream ? 'details.yes' : 'details.no'));
    if (details.modelPrice !== undefined) add('modelPrice', `$${details.modelPrice}`);
    else {
      add('modelRatio', ratio(details.modelRatio));
      add('completionRatio', ratio(details.completionRatio));
    }
    add('groupRatio', ratio(details.groupRatio));
    if (details.cacheTokens) {
      add('cacheTokens', String(details.cacheTokens));
      add('cacheRatio', ratio(details.cacheRatio));
    }
    if (details.cacheCreationTokens) {
      add('cacheCreationTokens', String(details.cacheCreationTokens));
      add('cacheCreationRatio', ratio(details.cacheCreationRatio));
    }
    if (details.reasoningTokens) add('reasoningTokens', String(details.reasoningTokens));
    add('reasoningEffort', details.reasoningEffort);
    if (admin && details.useChannel?.length) add('retryPath', details.useChannel.join(' → '));
  }
  if (admin) add('ip', log.ip);
  return (
    <details className="log-details" data-testid="log-details">
      <summary>
        {t('row.show')}
        <span className="logs-sr-only"> {t('details.label', { id: log.id })}</span>
      </summary>
      <dl>
        {log.content ? (
          <div className="log-details-content" data-testid="detail-content">
            <dt>{t('details.content')}</dt>
            <dd>
              <LogContent content={log.content} />
            </dd>
          </div>
        ) : null}
        {rows.map(([label, value, testId]) => (
          <div key={testId} data-testid={`detail-${testId}`}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
    </details>
  );
}

export function UserInfoList({ info, display }: { info: LogUserInfo; display: QuotaDisplay }) {
  const { t } = useTranslation('logs');
  return (
    <dl className="log-user-info" data-testid="user-info">
      <dt>{t('userInfo.username')}</dt>
      <dd>{info.username}</dd>
      <dt>{t('userInfo.quota')}</dt>
      <dd data-testid="user-quota">{formatQuota(info.quota, display)}</dd>
      <dt>{t('userInfo.usedQuota')}</dt>
      <dd>{formatQuota(info.used_quota, display)}</dd>
      <dt>{t('userInfo.requestCount')}</dt>
      <dd data-testid="user-requests">{info.request_count}</dd>
      <dt>{t('userInfo.group')}</dt>
      <dd>{info.group}</dd>
    </dl>
  );
}

type UserInfoReply = { info: LogUserInfo; display: QuotaDisplay };

/**
 * The admin's user cell: the username copies on click; the info button opens a dialog (JavaScript, loading
 * /log/user/{id}) or, without JavaScript, is a link to that page.
 */
export function UserCell({ log, back }: { log: LogWire; back: string }) {
  const { t } = useTranslation('logs');
  const hydrated = useHydrated();
  const href = `/log/user/${log.user_id}?${new URLSearchParams({ redirectTo: back })}`;
  const name = log.username || String(log.user_id);
  return (
    <div className="log-user">
      <CopyText text={log.username} />
      {!hydrated ? (
        <Link to={href} className="log-user-link" aria-label={t('userInfo.open', { name })}>
          i
        </Link>
      ) : (
        <DialogTrigger>
          <Button variant="ghost" className="log-user-link" aria-label={t('userInfo.open', { name })}>
            i
          </Button>
          <ModalOverlay isDismissable className="list-overlay">
            <Modal className="list-dialog">
              <Dialog>{({ close }) => <UserInfoBody id={log.user_id} close={close} />}</Dialog>
            </Modal>
          </ModalOverlay>
        </DialogTrigger>
      )}
    </div>
  );
}

function UserInfoBody({ id, close }: { id: number; close: () => void }) {
  const { t } = useTranslation('logs');
  const load = useFetcher<UserInfoReply>();
  const requested = useRef(false);
  useEffect(() => {
    if (requested.current) return;
    requested.current = true;
    load.load(`/log/user/${id}`);
  }, [id, load]);
  return (
    <>
      <Heading slot="title">{t('userInfo.title')}</Heading>
      {load.data ? (
        <UserInfoList info={load.data.info} display={load.data.display} />
      ) : (
        <p aria-busy="true">…</p>
      )}
      <div className="logs-dialog-actions">
        <Button onPress={close}>{t('userInfo.close')}</Button>
      </div>
    </>
  );
}

/** Route error boundary of the /log pages: the 403 page for non-admins, the generic error page otherwise. */
export function LogsErrorBoundary() {
  return <ListErrorBoundary ns="logs" />;
}

export { formatLogTime, parseOther };
