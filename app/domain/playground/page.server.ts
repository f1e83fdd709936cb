/**
 * The /playground page (seed 001 §2.14): what the left panel offers (the user's usable groups and each group's
 * models) and one turn of the conversation without JavaScript (the form posts the settings, the conversation
 * kept in hidden fields and the new question; the reply comes from the same call as POST /pg/chat/completions,
 * not streamed).
 */
import type { TFunction } from 'i18next';
import type { SessionUser } from '#app/domain/auth/session.server.ts';
import { enabledRoutes, type PricingCtx, viewerUsableGroups } from '#app/domain/pricing/pricing.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';
import {
  boundHistory,
  type ChatMessage,
  clampTemperature,
  defaultModel,
  MAX_MESSAGE_CHARS,
  MAX_TOKENS_LIMIT,
  PLAYGROUND_DEFAULT_SYSTEM,
  type PlaygroundSettings,
  requestMessages,
  TEMPERATURE,
} from './constants.ts';
import { playgroundComplete } from './playground.server.ts';
import { errorMessageOf } from './stream.ts';

export type PlaygroundGroup = { name: string; desc: string };

export type PlaygroundOptions = {
  groups: PlaygroundGroup[];
  /** group -> the models an enabled channel serves in it, sorted */
  models: Record<string, string[]>;
  defaults: PlaygroundSettings;
};

/**
 * The groups the user may call in (UserUsableGroups plus their own group, as tokens) and each one's models
 * (the same enabled routes /pricing shows). Defaults: the user's own group, gpt-4o-mini when the group serves it
 * else its first model, temperature 0.7, max tokens 0 (unset), the helpful-assistant system prompt.
 */
export async function playgroundOptions(
  ctx: Pick<PricingCtx, 'em' | 'options'> & { actor: SessionUser },
): Promise<PlaygroundOptions> {
  const usable = viewerUsableGroups(ctx);
  const groups = Object.entries(usable)
    .map(([name, desc]) => ({ name, desc: desc || name }))
    .sort((a, b) =>
      a.name === ctx.actor.group ? -1 : b.name === ctx.actor.group ? 1 : a.name.localeCompare(b.name),
    );
  const models: Record<string, string[]> = Object.fromEntries(groups.map((g) => [g.name, [] as string[]]));
  for (const [model, inGroups] of await enabledRoutes(ctx.em)) {
    for (const group of inGroups) models[group]?.push(model);
  }
  for (const list of Object.values(models)) list.sort();
  const group = groups[0]?.name ?? ctx.actor.group;
  return {
    groups,
    models,
    defaults: {
      group,
      model: defaultModel(models[group] ?? []),
      temperature: TEMPERATURE.default,
      max_tokens: 0,
      system: PLAYGROUND_DEFAULT_SYSTEM,
    },
  };
}

/** The form's settings, each one falling back to the default when missing or out of range. */
export function settingsFromForm(form: FormData, options: PlaygroundOptions): PlaygroundSettings {
  const text = (name: string) => {
    const value = form.get(name);
    return typeof value === 'string' ? value : null;
  };
  const d = options.defaults;
  const groupRaw = text('group');
  const group = groupRaw !== null && groupRaw in options.models ? groupRaw : d.group;
  const models = options.models[group] ?? [];
  const modelRaw = text('model');
  const model = modelRaw !== null && models.includes(modelRaw) ? modelRaw : defaultModel(models);
  const temperatureRaw = text('temperature');
  const temperature =
    temperatureRaw === null || temperatureRaw.trim() === ''
      ? d.temperature
      : clampTemperature(Number(temperatureRaw));
  const maxRaw = Number.parseInt(text('max_tokens') ?? '', 10);
  const max_tokens = Number.isFinite(maxRaw) ? Math.min(MAX_TOKENS_LIMIT, Math.max(0, maxRaw)) : 0;
  const systemRaw = text('system');
  const system = systemRaw === null ? d.system : systemRaw.slice(0, MAX_MESSAGE_CHARS);
  return { group, model, temperature, max_tokens, system };
}

const STATUSES = new Set(['complete', 'error']);

/**
 * The conversation the page posted back (hidden field `history`, JSON): well-formed messages only, each
 * message cut to MAX_MESSAGE_CHARS, the whole bounded by boundHistory. Anything unreadable is an empty history.
 */
export function historyFromForm(form: FormData): ChatMessage[] {
  const raw = form.get('history');
  if (typeof raw !== 'string' || raw === '') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  const messages: ChatMessage[] = [];
  for (const item of parsed.slice(-200)) {
    if (typeof item !== 'object' || item === null) continue;
    const { role, content, status } = item as Record<string, unknown>;
    if ((role !== 'user' && role !== 'assistant') || typeof content !== 'string') continue;
    const message: ChatMessage = { role, content: content.slice(0, MAX_MESSAGE_CHARS) };
    if (role === 'assistant')
      message.status =
        typeof status === 'string' && STATUSES.has(status) ? (status as 'complete' | 'error') : 'complete';
    messages.push(message);
  }
  return boundHistory(messages);
}

/** The reply's text of a completion JSON (the first choice's message content). */
function replyText(json: string): string | null {
  try {
    const body = JSON.parse(json) as { choices?: { message?: { content?: unknown } }[] };
    const content = body.choices?.[0]?.message?.content;
    return typeof content === 'string' ? content : null;
  } catch {
    return null;
  }
}

export type TurnResult = { conversation: ChatMessage[]; error: string | null };

/**
 * One turn without JavaScript: asks the model (non-streamed, billed and logged as POST /pg/chat/completions)
 * and answers the conversation with the question and the full reply, or the reply marked error with the error's
 * message (seed 001 §4).
 */
export async function playgroundTurn(
  deps: { services: ConsoleServices; user: SessionUser; ip: string; t: TFunction; signal?: AbortSignal },
  settings: PlaygroundSettings,
  history: ChatMessage[],
  question: string,
): Promise<TurnResult> {
  const asked: ChatMessage = { role: 'user', content: question };
  const failed = (message: string): TurnResult => ({
    conversation: boundHistory([...history, asked, { role: 'assistant', content: message, status: 'error' }]),
    error: message,
  });
  if (!settings.model) return failed(deps.t('playground:errors.noModel'));
  const answer = await playgroundComplete(
    deps.services,
    deps.user,
    {
      model: settings.model,
      group: settings.group,
      messages: requestMessages(settings.system, history, question),
      stream: false,
      temperature: settings.temperature,
      max_tokens: settings.max_tokens,
    },
    deps.ip,
    deps.signal,
  );
  if (!answer.ok) return failed(answer.refusal.message);
  const text = replyText(answer.json);
  if (text === null) {
    let body: unknown = null;
    try {
      body = JSON.parse(answer.json);
    } catch {}
    return failed(errorMessageOf(body) ?? deps.t('playground:errors.badReply'));
  }
  return {
    conversation: boundHistory([...history, asked, { role: 'assistant', content: text, status: 'complete' }]),
    error: null,
  };
}
