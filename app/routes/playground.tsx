import {
  type ActionFunctionArgs,
  data,
  type LinksFunction,
  type LoaderFunctionArgs,
  type MetaFunction,
} from '@remix-run/node';
import { Form, useActionData, useLoaderData, useNavigation } from '@remix-run/react';
import { type FormEvent, type KeyboardEvent, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Conversation } from '#app/components/playground/conversation.tsx';
import { SettingsPanel } from '#app/components/playground/settings-panel.tsx';
import { usePlaygroundChat } from '#app/components/playground/use-playground-chat.ts';
import { Button } from '#app/components/ui/button.tsx';
import { domainPageCtx } from '#app/domain/http.server.ts';
import {
  type ChatMessage,
  MAX_MESSAGE_CHARS,
  type PlaygroundSettings,
} from '#app/domain/playground/constants.ts';
import {
  historyFromForm,
  playgroundOptions,
  playgroundTurn,
  settingsFromForm,
} from '#app/domain/playground/page.server.ts';
import { getServices } from '#app/services.server.ts';
import playgroundStyles from '#app/styles/playground.css?url';
import { useHydrated } from '#app/utils/hydrated.ts';

export const handle = { i18n: ['common', 'playground'] };

export const links: LinksFunction = () => [{ rel: 'stylesheet', href: playgroundStyles }];

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Playground' }];

/** GET /playground (login; seed 001 §2.14): the left panel's choices; `?expired=1` shows the expired notice. */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await domainPageCtx(request, context, {});
  const options = await playgroundOptions(ctx);
  const expired = new URL(request.url).searchParams.get('expired') === '1';
  return data(
    { title: ctx.t('playground:title'), userId: ctx.actor.id, options, expired },
    { headers: { 'Cache-Control': 'no-store' } },
  );
}

export type PlaygroundReply = {
  settings: PlaygroundSettings;
  conversation: ChatMessage[];
  /** the question kept in the box when it was refused (empty, too long) */
  question: string;
  error: string | null;
};

/**
 * POST /playground (the form, without JavaScript): intent=send asks the model with the settings, the
 * conversation posted back in the hidden field and the new question, non-streamed, and answers the page with the
 * whole conversation (a relay failure is the reply marked error, HTTP 200: the page shows what happened);
 * intent=clear empties the context; intent=group lists the chosen group's models. Bad input: 400.
 */
export async function action({ request, context }: ActionFunctionArgs) {
  const ctx = await domainPageCtx(request, context, {});
  const options = await playgroundOptions(ctx);
  const form = await request.formData();
  const intent = form.get('intent');
  const settings = settingsFromForm(form, options);
  const history = historyFromForm(form);
  const raw = form.get('question');
  const question = typeof raw === 'string' ? raw : '';
  const reply = (fields: Partial<PlaygroundReply>, status = 200) =>
    data<PlaygroundReply>(
      { settings, conversation: history, question: '', error: null, ...fields },
      { status },
    );

  if (intent === 'clear') return reply({ conversation: [] });
  if (intent === 'group') return reply({ question });
  if (intent !== 'send') return reply({ question, error: ctx.t('playground:errors.unknownIntent') }, 400);
  if (question.trim() === '') return reply({ question, error: ctx.t('playground:errors.empty') }, 400);
  if (!settings.model) return reply({ question, error: ctx.t('playground:errors.noModel') }, 400);
  if (question.length > MAX_MESSAGE_CHARS)
    return reply(
      {
        question: question.slice(0, MAX_MESSAGE_CHARS),
        error: ctx.t('playground:errors.tooLong', { max: MAX_MESSAGE_CHARS }),
      },
      400,
    );
  const turn = await playgroundTurn(
    { services: getServices(context), user: ctx.actor, ip: ctx.ip, t: ctx.t, signal: request.signal },
    settings,
    history,
    question,
  );
  return reply({ conversation: turn.conversation, error: turn.error });
}

export default function PlaygroundRoute() {
  const { options, userId, expired } = useLoaderData<typeof loader>();
  const reply = useActionData<typeof action>();
  const { t } = useTranslation('playground');
  const { t: tCommon } = useTranslation('common');
  const hydrated = useHydrated();
  const navigation = useNavigation();
  const [settings, setSettings] = useState<PlaygroundSettings>(reply?.settings ?? options.defaults);
  const [question, setQuestion] = useState(reply?.question ?? '');
  const [inputError, setInputError] = useState<string | null>(null);
  const chat = usePlaygroundChat({
    userId,
    initial: reply?.conversation ?? [],
    tCommon,
    networkError: t('errors.network'),
  });
  const formRef = useRef<HTMLFormElement>(null);
  const questionRef = useRef<HTMLTextAreaElement>(null);
  const posting = navigation.state !== 'idle';
  // The refusal of the last post (no JavaScript); a relay failure shows as the reply marked error instead.
  const formError =
    inputError ?? (reply && reply.conversation.at(-1)?.status !== 'error' ? reply.error : null);

  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const submitter = (event.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null;
    const intent = submitter?.value ?? 'send';
    if (intent === 'clear') return chat.clear();
    if (intent !== 'send' || chat.busy) return;
    if (question.trim() === '') return setInputError(t('errors.empty'));
    if (!settings.model) return setInputError(t('errors.noModel'));
    setInputError(null);
    void chat.send(settings, question);
    setQuestion('');
    // The send button is disabled while the reply streams: keep the keyboard in the message box.
    questionRef.current?.focus();
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      formRef.current?.requestSubmit(
        formRef.current.querySelector<HTMLButtonElement>('button[value="send"]'),
      );
    }
  };

  return (
    <div className="page pg-page">
      <h1>{t('title')}</h1>
      {expired ? (
        <p className="notice pg-expired" role="alert" data-testid="pg-expired">
          {t('expired')}
        </p>
      ) : null}
      <Form method="post" className="pg-layout" ref={formRef} onSubmit={hydrated ? onSubmit : undefined}>
        <SettingsPanel
          groups={options.groups}
          models={options.models}
          settings={settings}
          onChange={setSettings}
          hydrated={hydrated}
        />
        <section className="pg-chat" aria-labelledby="pg-chat-heading">
          <div className="pg-chat-head">
            <h2 id="pg-chat-heading">{t('chat.heading')}</h2>
            <Button type="submit" name="intent" value="clear" variant="ghost">
              {t('chat.clear')}
            </Button>
          </div>
          <Conversation messages={chat.conversation} busy={chat.busy} />
          <input type="hidden" name="history" value={JSON.stringify(chat.conversation)} />
          <div className="pg-compose">
            <label htmlFor="pg-question" className="sr-only">
              {t('chat.input')}
            </label>
            <textarea
              id="pg-question"
              ref={questionRef}
              name="question"
              rows={3}
              maxLength={MAX_MESSAGE_CHARS}
              placeholder={t('chat.placeholder')}
              value={question}
              onChange={(e) => setQuestion(e.currentTarget.value)}
              onKeyDown={onKeyDown}
              aria-invalid={formError ? true : undefined}
              aria-describedby={formError ? 'pg-question-error' : undefined}
            />
            <div className="pg-compose-actions">
              {chat.busy ? (
                <Button type="button" onPress={chat.stop}>
                  {t('chat.stop')}
                </Button>
              ) : null}
              <Button
                type="submit"
                name="intent"
                value="send"
                variant="primary"
                isDisabled={chat.busy || posting}
              >
                {chat.busy || posting ? t('chat.sending') : t('chat.send')}
              </Button>
            </div>
          </div>
          {formError ? (
            <p className="field-error" id="pg-question-error" role="alert">
              {formError}
            </p>
          ) : null}
        </section>
      </Form>
    </div>
  );
}
