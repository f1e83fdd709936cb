/**
 * Midjourney through the relay (issue 17, ADR 029): submits in the midjourney-proxy API to channels of type 2
 * (Midjourney Proxy) and 5 (Midjourney Proxy Plus), each accepted submit charged its fixed price, follow-up
 * actions on the channel that owns the original task, and the caller's tasks read from `midjourney_tasks`
 * (kept current by the poller, poller.ts).
 */
import type { OptionService } from '@switchyard/db/options/service.ts';
import { type Caller, checkModelLimit } from '../../core/auth.ts';
import { type Catalog, selectChannel } from '../../core/catalog.ts';
import { channelConfig } from '../../core/relay.ts';
import type { ChannelRecord } from '../../core/repo.ts';
import type { Logger } from '../../log.ts';
import type { TaskCharges, TaskHold } from '../charge.ts';
import { newNotifySecret, notifyHash, notifyUrl } from './notify.ts';
import type { MidjourneyRepo } from './repo.ts';
import {
  ACCEPTED_CODES,
  actionOfCustomId,
  CODE_NO_ACCOUNT,
  CODE_QUEUE_FULL,
  clearMode,
  MjAction,
  modelOfAction,
  parseSubmitAnswer,
  type TaskRow,
  taskDto,
} from './wire.ts';

/** Channel types that speak the midjourney-proxy API. */
export const MIDJOURNEY_CHANNEL_TYPES: ReadonlySet<number> = new Set([2, 5]);

/** The submit endpoints served, with the action each one starts (null: the action comes from the body). */
export const SUBMIT_KINDS = {
  imagine: MjAction.Imagine,
  blend: MjAction.Blend,
  describe: MjAction.Describe,
  shorten: MjAction.Shorten,
  action: null,
  modal: MjAction.Modal,
  change: null,
  'simple-change': null,
  'upload-discord-images': MjAction.Upload,
  // InsightFace's face swap (new-api's swap_face), at `/mj/insight-face/swap` rather than under `submit/`.
  'insight-face/swap': MjAction.SwapFace,
} as const;
export type SubmitKind = keyof typeof SUBMIT_KINDS;

/** The upstream path of a submit: `/mj/submit/<kind>`, or `/mj/insight-face/swap`. */
export function submitPath(kind: SubmitKind): string {
  return kind === 'insight-face/swap' ? '/mj/insight-face/swap' : `/mj/submit/${kind}`;
}

export type MidjourneyDeps = {
  repo: MidjourneyRepo;
  charges: TaskCharges;
  catalog: Catalog;
  options: OptionService;
  log: Logger;
  fetch?: typeof fetch;
  upstreamTimeoutMs: number;
  /** Auto-disables a channel (RelayCore.disableChannel). */
  disableChannel: (channel: ChannelRecord, reason: string) => Promise<unknown>;
  now?: () => number;
};

export type MjAnswer = { status: number; body: unknown };

/** An error in the midjourney-proxy envelope new-api answers with (`{code, description, result}`). */
export class MjError extends Error {
  readonly status: number;
  readonly code: number;

  constructor(status: number, code: number, description: string) {
    super(description);
    this.status = status;
    this.code = code;
  }
}

const CHANGE_ACTIONS: Record<string, MjAction> = {
  UPSCALE: MjAction.Upscale,
  VARIATION: MjAction.Variation,
  REROLL: MjAction.Reroll,
};

export class MidjourneyService {
  readonly #d: MidjourneyDeps;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;

  constructor(deps: MidjourneyDeps) {
    this.#d = deps;
    this.#fetch = deps.fetch ?? fetch;
    this.#now = deps.now ?? Date.now;
  }

  /** The action and (for follow-ups) the original task id a submit names; MjError for a malformed one. */
  static actionOf(
    kind: SubmitKind,
    body: Record<string, unknown>,
  ): { action: MjAction; taskId: string | null } {
    const text = (k: string) => (typeof body[k] === 'string' ? (body[k] as string).trim() : '');
    switch (kind) {
      case 'action': {
        const action = actionOfCustomId(text('customId'));
        if (!text('taskId') || !text('customId'))
          throw new MjError(400, 4, 'taskId and customId are required');
        if (!action) throw new MjError(400, 4, 'unknown customId');
        return { action, taskId: text('taskId') };
      }
      case 'modal':
        if (!text('taskId')) throw new MjError(400, 4, 'taskId is required');
        return { action: MjAction.Modal, taskId: text('taskId') };
      case 'change': {
        const action = CHANGE_ACTIONS[text('action').toUpperCase()];
        if (!action || !text('taskId')) throw new MjError(400, 4, 'action and taskId are required');
        return { action, taskId: text('taskId') };
      }
      case 'simple-change': {
        // "<taskId> U1" / "V2" / "R"
        const m = /^(\S+)\s+([UVR])(\d?)$/i.exec(text('content'));
        if (!m) throw new MjError(400, 4, 'content must be "<taskId> U1..U4 | V1..V4 | R"');
        const letter = m[2]!.toUpperCase();
        return {
          action: letter === 'U' ? MjAction.Upscale : letter === 'V' ? MjAction.Variation : MjAction.Reroll,
          taskId: m[1]!,
        };
      }
      case 'insight-face/swap':
        // The face of sourceBase64 put on the person of targetBase64 (data URLs); both are needed (new-api).
        if (!text('sourceBase64') || !text('targetBase64'))
          throw new MjError(400, 4, 'sourceBase64 and targetBase64 are required');
        return { action: MjAction.SwapFace, taskId: null };
      default:
        if (kind === 'imagine' && !text('prompt')) throw new MjError(400, 4, 'prompt is required');
        return { action: SUBMIT_KINDS[kind] as MjAction, taskId: null };
    }
  }

  /** Sends a submit of an authenticated caller upstream and charges it when accepted. */
  async submit(
    kind: SubmitKind,
    body: Record<string, unknown>,
    caller: Caller,
    clientIp: string,
  ): Promise<MjAnswer> {
    const d = this.#d;
    const { action, taskId } = MidjourneyService.actionOf(kind, body);
    const model = modelOfAction(action);
    // The token's model limits apply to the priced model name (mj_imagine, mj_upscale, ...), as in new-api.
    if (caller.token) checkModelLimit(caller.token, model);

    let original: TaskRow | null = null;
    let pinned: ChannelRecord | null = null;
    if (taskId !== null) {
      original = await d.repo.byMjId(caller.user.id, taskId);
      if (!original) throw new MjError(400, 4, 'task_not_found');
      pinned = d.catalog.snapshot.channels.get(original.channelId) ?? null;
      if (pinned?.status !== 1) throw new MjError(400, 4, 'the channel of the original task is disabled');
      // The modal step answers a window the original task opened: it is never SUCCESS yet (new-api).
      if (
        d.options.get('MjActionCheckSuccessEnabled') &&
        original.status !== 'SUCCESS' &&
        action !== MjAction.Modal
      )
        throw new MjError(400, 4, 'task_status_not_success');
    }

    const out: Record<string, unknown> = { ...body };
    // A client's own notifyHook never reaches the upstream; with MjNotifyEnabled the upstream is given the relay's
    // callback URL carrying a secret of this submit alone (ADR 036).
    delete out.notifyHook;
    let notify: { secret: string; hash: string } | null = null;
    if (d.options.get('MjNotifyEnabled')) {
      const secret = newNotifySecret();
      const hook = notifyUrl(d.options.get('ServerAddress'), secret);
      if (hook) {
        out.notifyHook = hook;
        notify = { secret, hash: notifyHash(secret) };
      }
    }
    if (!d.options.get('MjAccountFilterEnabled')) delete out.accountFilter;
    if (typeof out.prompt === 'string' && d.options.get('MjModeClearEnabled'))
      out.prompt = clearMode(out.prompt);

    const hold = await d.charges.hold(caller, model);
    let settled = false;
    try {
      const tried = new Set<number>();
      const retries = pinned || caller.pinnedChannelId !== null ? 0 : d.options.get('RetryTimes');
      let lastError: MjError | null = null;
      for (let attempt = 0; attempt <= retries; attempt++) {
        const channel = pinned ?? this.#pick(caller, model, tried);
        if (!channel) break;
        tried.add(channel.id);
        const sent = await this.#send(channel, submitPath(kind), out);
        if (!sent.ok) {
          lastError = sent.error;
          if (sent.retryable) continue;
          break;
        }
        const answer = sent.answer;
        if (answer.code === CODE_NO_ACCOUNT) await this.#noAccount(channel);
        if (!ACCEPTED_CODES.has(answer.code) || !answer.result) {
          // Refused: nothing is charged; the client gets the upstream's answer (queue full as a 429).
          return { status: answer.code === CODE_QUEUE_FULL ? 429 : sent.status, body: sent.json };
        }
        await d.charges.settle(hold, channel.id, clientIp);
        settled = true;
        await this.#record(hold, channel, action, answer, original, out, notify?.hash ?? '').catch((e) =>
          d.log.error(`midjourney task ${answer.result} accepted but not recorded`, e),
        );
        const json = { ...(sent.json as Record<string, unknown>) };
        // "Already exists" and "queued" are a submitted task for the client (new-api), except for the free inpaint
        // and custom zoom, whose 21 asks the client for the modal step.
        const free = action === MjAction.Inpaint || action === MjAction.CustomZoom;
        if (answer.code === 22 || (answer.code === 21 && !free)) json.code = 1;
        return { status: 200, body: json };
      }
      throw (
        lastError ?? new MjError(503, 4, `no available channel for model ${model} in group ${caller.group}`)
      );
    } finally {
      if (!settled) await d.charges.release(hold);
    }
  }

  /** Code 3 ("no available account"): the channel cannot draw; auto-disabled as a failing channel would be. */
  async #noAccount(channel: ChannelRecord): Promise<void> {
    const d = this.#d;
    if (!d.options.get('AutomaticDisableChannelEnabled') || !channel.autoBan || channel.status !== 1) return;
    await d
      .disableChannel(channel, 'No available account instance')
      .catch((e) => d.log.warn(`disabling channel #${channel.id} failed: ${(e as Error).message}`));
  }

  #pick(caller: Caller, model: string, tried: Set<number>): ChannelRecord | null {
    const snap = this.#d.catalog.snapshot;
    if (caller.pinnedChannelId !== null) {
      const ch = snap.channels.get(caller.pinnedChannelId);
      if (!ch || tried.has(ch.id)) return null;
      if (ch.status !== 1 || !MIDJOURNEY_CHANNEL_TYPES.has(ch.type))
        throw new MjError(400, 4, 'the pinned channel cannot serve this request');
      return ch;
    }
    for (;;) {
      const ch = selectChannel(snap, caller.group, model, tried);
      if (!ch) return null;
      if (MIDJOURNEY_CHANNEL_TYPES.has(ch.type)) return ch;
      tried.add(ch.id);
    }
  }

  async #send(
    channel: ChannelRecord,
    path: string,
    body: Record<string, unknown>,
  ): Promise<
    | { ok: true; status: number; json: unknown; answer: NonNullable<ReturnType<typeof parseSubmitAnswer>> }
    | { ok: false; retryable: boolean; error: MjError }
  > {
    let res: Response;
    try {
      res = await this.#fetch(`${channel.baseUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'mj-api-secret': channelConfig(channel).key },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.#d.upstreamTimeoutMs),
      });
    } catch (err) {
      this.#d.log.warn(`midjourney channel #${channel.id}: upstream unreachable (${(err as Error).message})`);
      return { ok: false, retryable: true, error: new MjError(502, 4, 'the upstream could not be reached') };
    }
    const text = await res.text().catch(() => '');
    const answer = res.ok ? parseSubmitAnswer(text) : null;
    if (!answer)
      return {
        ok: false,
        // A 200 we cannot read may have started a task: never sent to a second channel.
        retryable: res.status >= 500 || res.status === 429,
        error: new MjError(
          // The channel's own key refused is the gateway's problem, not the client's.
          res.ok || res.status === 401 || res.status === 403 ? 502 : res.status,
          4,
          `upstream answered ${res.status}: ${text.slice(0, 200)}`,
        ),
      };
    return { ok: true, status: res.status, json: JSON.parse(text), answer };
  }

  async #record(
    hold: TaskHold,
    channel: ChannelRecord,
    action: MjAction,
    answer: NonNullable<ReturnType<typeof parseSubmitAnswer>>,
    original: TaskRow | null,
    body: Record<string, unknown>,
    notifyHash: string,
  ): Promise<void> {
    // A face swap has no prompt; new-api records it as 'InsightFace'.
    const prompt =
      action === MjAction.SwapFace
        ? 'InsightFace'
        : typeof body.prompt === 'string'
          ? body.prompt
          : (original?.prompt ?? '');
    const now = this.#now();
    // As new-api: no status until the first poll; a task that already exists brings its state, an upload is done.
    let status = '';
    let progress = '0%';
    let imageUrl = '';
    const p = answer.properties;
    if (answer.code === 21 && typeof p.status === 'string' && typeof p.imageUrl === 'string') {
      status = p.status;
      imageUrl = p.imageUrl;
      if (status === 'SUCCESS') progress = '100%';
    }
    if (answer.code === 1 && action === MjAction.Upload) {
      status = 'SUCCESS';
      progress = '100%';
    }
    await this.#d.repo.insert({
      code: answer.code,
      userId: hold.caller.user.id,
      tokenId: hold.caller.token?.id ?? 0,
      group: hold.caller.group,
      action,
      mjId: answer.result!,
      prompt,
      description: answer.description,
      state: typeof body.state === 'string' ? body.state : '',
      submitTime: now,
      finishTime: status === 'SUCCESS' ? now : 0,
      imageUrl,
      status,
      progress,
      channelId: channel.id,
      quota: hold.amount,
      requestId: hold.requestId,
      properties: JSON.stringify(answer.properties),
      notifyHash,
    });
  }

  /** The image URL clients see: through the gateway's image proxy with MjForwardUrlEnabled (new-api). */
  #imageUrl(row: TaskRow): string {
    const d = this.#d;
    if (!row.imageUrl || !d.options.get('MjForwardUrlEnabled')) return row.imageUrl;
    const base = d.options.get('ServerAddress').replace(/\/+$/, '');
    const url = `${base}/mj/image/${encodeURIComponent(row.mjId)}`;
    // An image still being drawn changes: a new address per read defeats caches.
    return row.status === 'SUCCESS' ? url : `${url}?rand=${this.#now()}`;
  }

  /** `task/{id}/fetch`: the caller's task, or null. */
  async fetchTask(caller: Caller, mjId: string) {
    const row = await this.#d.repo.byMjId(caller.user.id, mjId);
    return row ? taskDto(row, this.#imageUrl(row)) : null;
  }

  /** `task/list-by-condition`: the caller's tasks among `ids`. */
  async listTasks(caller: Caller, ids: readonly string[]) {
    const rows = await this.#d.repo.byMjIds(caller.user.id, ids);
    return rows.map((r) => taskDto(r, this.#imageUrl(r)));
  }

  /** `task/{id}/image-seed`: asked of the channel that drew the caller's task; the answer passes through. */
  async imageSeed(caller: Caller, mjId: string): Promise<MjAnswer> {
    const d = this.#d;
    const row = await d.repo.byMjId(caller.user.id, mjId);
    if (!row) throw new MjError(404, 4, 'task_no_found');
    const channel = d.catalog.snapshot.channels.get(row.channelId);
    if (channel?.status !== 1) throw new MjError(400, 4, 'the channel of the task is disabled');
    let res: Response;
    try {
      res = await this.#fetch(`${channel.baseUrl}/mj/task/${encodeURIComponent(mjId)}/image-seed`, {
        headers: { 'mj-api-secret': channelConfig(channel).key },
        signal: AbortSignal.timeout(30_000),
      });
    } catch {
      throw new MjError(502, 4, 'the upstream could not be reached');
    }
    const text = await res.text().catch(() => '');
    try {
      return { status: res.status, body: JSON.parse(text) };
    } catch {
      throw new MjError(502, 4, `upstream answered ${res.status}: ${text.slice(0, 200)}`);
    }
  }

  /**
   * `GET /mj/image/{id}` (no key, as new-api): the task's image fetched from its upstream and streamed back. Only
   * an http(s) URL the upstream reported for a stored task is ever fetched.
   */
  async image(mjId: string): Promise<Response> {
    const row = await this.#d.repo.byOnlyMjId(mjId);
    if (!row?.imageUrl) throw new MjError(404, 4, 'midjourney_task_not_found');
    if (!/^https?:\/\//i.test(row.imageUrl)) throw new MjError(400, 4, 'the task has no image address');
    let res: Response;
    try {
      res = await this.#fetch(row.imageUrl, { signal: AbortSignal.timeout(this.#d.upstreamTimeoutMs) });
    } catch {
      throw new MjError(502, 4, 'http_get_image_failed');
    }
    if (!res.ok || !res.body) {
      await res.body?.cancel().catch(() => {});
      throw new MjError(res.status >= 400 ? res.status : 502, 4, 'http_get_image_failed');
    }
    return new Response(res.body, {
      status: 200,
      headers: { 'content-type': res.headers.get('content-type') || 'image/jpeg' },
    });
  }
}
