/**
 * Suno through the relay (issue 17, ADR 029): new-api's Suno API for channel type 36, talking to a Suno-API
 * proxy. `POST /suno/submit/{music,lyrics}` is priced as the fixed-price model `suno_<action>`, held before the
 * upstream is asked, settled when it answers `{"code":"success","data":"<task id>"}` and released otherwise; a
 * continuation (`task_id`) goes to the channel of the caller's original task. Fetches read the caller's rows in
 * `tasks` (kept current by poller.ts), never the upstream.
 */
import type { OptionService } from '@switchyard/db/options/service.ts';
import { type Caller, checkModelLimit } from '../../core/auth.ts';
import { type Catalog, selectChannel } from '../../core/catalog.ts';
import { channelConfig } from '../../core/relay.ts';
import type { ChannelRecord } from '../../core/repo.ts';
import type { Logger } from '../../log.ts';
import type { TaskCharges } from '../charge.ts';
import type { SunoRepo, SunoTaskRow } from './repo.ts';

export const SUNO_CHANNEL_TYPE = 36;
export const SUNO_ACTIONS = { music: 'MUSIC', lyrics: 'LYRICS' } as const;
export type SunoAction = keyof typeof SUNO_ACTIONS;

/** The priced model of an action (new-api: suno_music, suno_lyrics). */
export const sunoModel = (action: string) => `suno_${action.toLowerCase()}`;

/** An error in new-api's task envelope `{"code","message","data"}`. */
export class SunoError extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** The task as the client reads it (new-api's TaskDto; times in unix seconds, data the upstream's record). */
export function sunoTaskDto(r: SunoTaskRow) {
  let data: unknown = null;
  try {
    data = r.data ? JSON.parse(r.data) : null;
  } catch {
    data = null;
  }
  return {
    task_id: r.taskId,
    action: r.action,
    status: r.status,
    fail_reason: r.failReason,
    submit_time: r.submitTime,
    start_time: r.startTime,
    finish_time: r.finishTime,
    progress: r.progress,
    data,
  };
}

export type SunoDeps = {
  repo: SunoRepo;
  charges: TaskCharges;
  catalog: Catalog;
  options: OptionService;
  log: Logger;
  fetch?: typeof fetch;
  upstreamTimeoutMs: number;
  now?: () => number;
};

const text = (body: Record<string, unknown>, k: string) =>
  typeof body[k] === 'string' ? (body[k] as string).trim() : '';

export class SunoService {
  readonly #d: SunoDeps;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;

  constructor(deps: SunoDeps) {
    this.#d = deps;
    this.#fetch = deps.fetch ?? fetch;
    this.#now = deps.now ?? Date.now;
  }

  /** Checks a submit body as new-api does: a music task needs a prompt or a description, lyrics a prompt. */
  static validate(action: SunoAction, body: Record<string, unknown>): void {
    if (action === 'music' && !text(body, 'prompt') && !text(body, 'gpt_description_prompt'))
      throw new SunoError(400, 'invalid_request', 'prompt or gpt_description_prompt is required');
    if (action === 'lyrics' && !text(body, 'prompt'))
      throw new SunoError(400, 'invalid_request', 'prompt is required');
    if (body.continue_at !== undefined && typeof body.continue_at !== 'number')
      throw new SunoError(400, 'invalid_request', 'continue_at must be a number');
  }

  async submit(
    action: SunoAction,
    body: Record<string, unknown>,
    caller: Caller,
    clientIp: string,
  ): Promise<{ status: number; body: unknown }> {
    const d = this.#d;
    SunoService.validate(action, body);
    const upper = SUNO_ACTIONS[action];
    const model = sunoModel(upper);
    if (caller.token) checkModelLimit(caller.token, model);

    // A continuation goes to the channel of the caller's original task (new-api).
    let pinned: ChannelRecord | null = null;
    const original = text(body, 'task_id');
    if (original) {
      const row = await d.repo.byTaskId(caller.user.id, original);
      if (!row) throw new SunoError(400, 'task_not_exist', 'task_not_exist');
      pinned = d.catalog.snapshot.channels.get(row.channelId) ?? null;
      if (pinned?.status !== 1)
        throw new SunoError(400, 'channel_disabled', 'the channel of the original task is disabled');
    }

    const hold = await d.charges.hold(caller, model);
    let settled = false;
    try {
      const tried = new Set<number>();
      const retries = pinned || caller.pinnedChannelId !== null ? 0 : d.options.get('RetryTimes');
      let lastError: SunoError | null = null;
      for (let attempt = 0; attempt <= retries; attempt++) {
        const channel = pinned ?? this.#pick(caller, model, tried);
        if (!channel) break;
        tried.add(channel.id);
        const sent = await this.#send(channel, `/suno/submit/${action}`, body);
        if (!sent.ok) {
          lastError = sent.error;
          if (sent.retryable) continue;
          break;
        }
        if (sent.code !== 'success' || !sent.taskId) {
          // Refused: nothing is charged; the client gets the upstream's answer.
          return { status: sent.status === 200 ? 400 : sent.status, body: sent.json };
        }
        await d.charges.settle(hold, channel.id, clientIp);
        settled = true;
        await d.repo
          .insert({
            taskId: sent.taskId,
            userId: caller.user.id,
            tokenId: caller.token?.id ?? 0,
            group: caller.group,
            channelId: channel.id,
            quota: hold.amount,
            action: upper,
            submitTime: Math.floor(this.#now() / 1000),
            requestId: hold.requestId,
            properties: JSON.stringify({
              input: text(body, 'prompt') || text(body, 'gpt_description_prompt'),
            }),
          })
          .catch((e) => d.log.error(`suno task ${sent.taskId} accepted but not recorded`, e));
        return { status: 200, body: { code: 'success', message: '', data: sent.taskId } };
      }
      throw (
        lastError ??
        new SunoError(
          503,
          'no_available_channel',
          `no available channel for model ${model} in group ${caller.group}`,
        )
      );
    } finally {
      if (!settled) await d.charges.release(hold);
    }
  }

  #pick(caller: Caller, model: string, tried: Set<number>): ChannelRecord | null {
    const snap = this.#d.catalog.snapshot;
    if (caller.pinnedChannelId !== null) {
      const ch = snap.channels.get(caller.pinnedChannelId);
      if (!ch || tried.has(ch.id)) return null;
      if (ch.status !== 1 || ch.type !== SUNO_CHANNEL_TYPE)
        throw new SunoError(400, 'invalid_channel', 'the pinned channel cannot serve this request');
      return ch;
    }
    for (;;) {
      const ch = selectChannel(snap, caller.group, model, tried);
      if (!ch) return null;
      if (ch.type === SUNO_CHANNEL_TYPE) return ch;
      tried.add(ch.id);
    }
  }

  async #send(
    channel: ChannelRecord,
    path: string,
    body: Record<string, unknown>,
  ): Promise<
    | { ok: true; status: number; json: unknown; code: string; taskId: string }
    | { ok: false; retryable: boolean; error: SunoError }
  > {
    let res: Response;
    try {
      res = await this.#fetch(`${channel.baseUrl}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${channelConfig(channel).key}`,
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.#d.upstreamTimeoutMs),
      });
    } catch (err) {
      this.#d.log.warn(`suno channel #${channel.id}: upstream unreachable (${(err as Error).message})`);
      return {
        ok: false,
        retryable: true,
        error: new SunoError(502, 'upstream_error', 'the upstream could not be reached'),
      };
    }
    const raw = await res.text().catch(() => '');
    let json: Record<string, unknown> | null = null;
    try {
      const v = JSON.parse(raw) as unknown;
      if (v && typeof v === 'object' && !Array.isArray(v)) json = v as Record<string, unknown>;
    } catch {
      json = null;
    }
    // A 400 is never retried (new-api); 5xx and 429 go to the next channel; a 200 we cannot read is final.
    if (!res.ok && (res.status >= 500 || res.status === 429))
      return {
        ok: false,
        retryable: true,
        error: new SunoError(502, 'upstream_error', `upstream answered ${res.status}: ${raw.slice(0, 200)}`),
      };
    if (!json)
      return {
        ok: false,
        retryable: false,
        error: new SunoError(502, 'upstream_error', `upstream answered ${res.status}: ${raw.slice(0, 200)}`),
      };
    if (!res.ok)
      // The channel's own key refused is the gateway's problem; other 4xx are the client's.
      return res.status === 401 || res.status === 403
        ? {
            ok: false,
            retryable: false,
            error: new SunoError(502, 'upstream_error', `upstream answered ${res.status}`),
          }
        : { ok: true, status: res.status, json, code: String(json.code ?? ''), taskId: '' };
    return {
      ok: true,
      status: res.status,
      json,
      code: String(json.code ?? ''),
      taskId: typeof json.data === 'string' ? json.data : '',
    };
  }

  /** `GET /suno/fetch/{id}`: the caller's task, or null. */
  async fetchTask(caller: Caller, taskId: string) {
    const row = await this.#d.repo.byTaskId(caller.user.id, taskId);
    return row ? sunoTaskDto(row) : null;
  }

  /** `POST /suno/fetch {"ids"}`: the caller's tasks among ids. */
  async listTasks(caller: Caller, ids: readonly string[]) {
    return (await this.#d.repo.byTaskIds(caller.user.id, ids)).map(sunoTaskDto);
  }
}
