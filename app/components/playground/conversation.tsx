/**
 * The conversation: one article per message with its state (seed 001 §4: loading, incomplete, complete, error)
 * as `data-status`. The list is a polite live log, busy while a reply streams, so a screen reader reads the
 * reply once it is complete rather than every chunk; a status line announces the reply's state.
 */
import { useTranslation } from 'react-i18next';
import type { ChatMessage } from '#app/domain/playground/constants.ts';

export function Conversation({ messages, busy }: { messages: ChatMessage[]; busy: boolean }) {
  const { t } = useTranslation('playground');
  const last = messages[messages.length - 1];
  const state = last?.role === 'assistant' && last.status ? t(`chat.status.${last.status}`) : '';
  return (
    <>
      <div
        className="pg-log"
        role="log"
        aria-live="polite"
        aria-relevant="additions text"
        aria-busy={busy}
        aria-label={t('chat.heading')}
        data-testid="pg-log"
      >
        {messages.length === 0 ? <p className="pg-empty">{t('chat.empty')}</p> : null}
        {messages.map((m, i) => (
          <article
            key={i}
            className={`pg-msg pg-msg-${m.role}`}
            data-role={m.role}
            data-status={m.role === 'assistant' ? (m.status ?? 'complete') : undefined}
            data-testid="pg-message"
          >
            <h3 className="pg-msg-who">
              {m.role === 'user' ? t('chat.you') : t('chat.assistant')}
              {m.role === 'assistant' && m.status === 'error' ? (
                <span className="pg-msg-badge">{t('chat.status.error')}</span>
              ) : null}
            </h3>
            {m.role === 'assistant' && m.status === 'loading' ? (
              <p className="pg-msg-text pg-msg-pending">{t('chat.status.loading')}</p>
            ) : (
              <p className="pg-msg-text">{m.content}</p>
            )}
          </article>
        ))}
      </div>
      <p className="sr-only" role="status" data-testid="pg-state">
        {state}
      </p>
    </>
  );
}
