/**
 * The conversation with JavaScript: each question streams its reply through POST /pg/chat/completions (seed 001
 * §4 "Playground message": loading, incomplete while chunks arrive, complete on [DONE] or when the connection
 * closes; error with the error's message appended to the reply). Stop aborts the request: what arrived stays as
 * the complete reply (the relay bills what was produced).
 */
import { useCallback, useRef, useState } from 'react';
import {
  boundHistory,
  type ChatMessage,
  type PlaygroundSettings,
  requestMessages,
} from '#app/domain/playground/constants.ts';
import { errorMessageOf, readEventStream } from '#app/domain/playground/stream.ts';
import { EXPIRED_LOGIN_URL, httpErrorMessage } from '#app/utils/api-client.ts';

type Translate = (key: string, options?: Record<string, unknown>) => string;

/** The error's message appended to what the reply holds so far. */
export function appendError(content: string, message: string): string {
  return content ? `${content}\n\n${message}` : message;
}

export function usePlaygroundChat(opts: {
  userId: number;
  initial: ChatMessage[];
  /** common-namespace translate (the shared HTTP error messages) */
  tCommon: Translate;
  networkError: string;
}) {
  const [conversation, setConversation] = useState<ChatMessage[]>(opts.initial);
  const [busy, setBusy] = useState(false);
  const abortRef = useRef<AbortController | null>(null);

  /** Changes the last message (the reply being written). */
  const updateReply = useCallback((change: (m: ChatMessage) => ChatMessage) => {
    setConversation((list) => {
      const last = list[list.length - 1];
      if (last?.role !== 'assistant') return list;
      return [...list.slice(0, -1), change(last)];
    });
  }, []);

  const send = useCallback(
    async (settings: PlaygroundSettings, question: string) => {
      if (abortRef.current) return;
      const controller = new AbortController();
      abortRef.current = controller;
      const messages = requestMessages(settings.system, conversation, question);
      setConversation((list) => [
        ...boundHistory(list),
        { role: 'user', content: question },
        { role: 'assistant', content: '', status: 'loading' },
      ]);
      setBusy(true);
      const fail = (message: string) =>
        updateReply((m) => ({ ...m, content: appendError(m.content, message), status: 'error' }));
      try {
        const res = await fetch('/pg/chat/completions', {
          method: 'POST',
          credentials: 'same-origin',
          signal: controller.signal,
          headers: {
            'Content-Type': 'application/json',
            Accept: 'text/event-stream',
            'New-Api-User': String(opts.userId),
          },
          body: JSON.stringify({
            messages,
            stream: true,
            model: settings.model,
            group: settings.group,
            max_tokens: settings.max_tokens,
            temperature: settings.temperature,
          }),
        });
        if (res.status === 401) {
          window.location.assign(EXPIRED_LOGIN_URL);
          return;
        }
        if (!res.ok || !res.body) {
          const body: unknown = await res.json().catch(() => null);
          const message = errorMessageOf(body) ?? res.statusText;
          fail(
            res.status === 500 || res.status === 429 || res.status === 405
              ? (httpErrorMessage(res.status, message, opts.tCommon) ?? message)
              : message,
          );
          return;
        }
        const end = await readEventStream(res.body, (event) => {
          if (event.kind === 'delta')
            updateReply((m) => ({ ...m, content: m.content + event.text, status: 'incomplete' }));
          else if (event.kind === 'error') fail(event.message);
        });
        if (end !== 'error') updateReply((m) => ({ ...m, status: 'complete' }));
      } catch {
        if (controller.signal.aborted) updateReply((m) => ({ ...m, status: 'complete' }));
        else fail(opts.networkError);
      } finally {
        abortRef.current = null;
        setBusy(false);
      }
    },
    [conversation, opts.userId, opts.tCommon, opts.networkError, updateReply],
  );

  const stop = useCallback(() => abortRef.current?.abort(), []);
  const clear = useCallback(() => {
    abortRef.current?.abort();
    setConversation([]);
  }, []);

  return { conversation, busy, send, stop, clear };
}
