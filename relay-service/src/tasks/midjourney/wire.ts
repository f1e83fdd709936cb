/**
 * The midjourney-proxy wire format as new-api's clients use it: submit answers `{code, description, result,
 * properties}` (code 1 submitted, 21 waiting/exists, 22 queued; anything else is a refusal), task objects with
 * `id, action, status, progress ('0%'..'100%'), imageUrl, failReason, buttons, ...`, and the action of a button
 * (`customId`) with its model name for pricing (`mj_<action lowercased>`, new-api's names).
 */

/** Submit codes the upstream answers when it took the task (seed 001 §4); only these are charged. */
export const ACCEPTED_CODES: ReadonlySet<number> = new Set([1, 21, 22]);
/** midjourney-proxy "no available account": the channel cannot draw. */
export const CODE_NO_ACCOUNT = 3;
/** midjourney-proxy "queue full": answered to the client as HTTP 429. */
export const CODE_QUEUE_FULL = 30;

export const MjAction = {
  Imagine: 'IMAGINE',
  Describe: 'DESCRIBE',
  Blend: 'BLEND',
  Upscale: 'UPSCALE',
  Variation: 'VARIATION',
  Reroll: 'REROLL',
  Inpaint: 'INPAINT',
  Modal: 'MODAL',
  Zoom: 'ZOOM',
  CustomZoom: 'CUSTOM_ZOOM',
  Shorten: 'SHORTEN',
  HighVariation: 'HIGH_VARIATION',
  LowVariation: 'LOW_VARIATION',
  Pan: 'PAN',
  SwapFace: 'SWAP_FACE',
  Upload: 'UPLOAD',
} as const;
export type MjAction = (typeof MjAction)[keyof typeof MjAction];

/** Statuses after which a task never changes again. */
export const FINAL_STATUSES = ['SUCCESS', 'FAILURE'] as const;

/** The priced model of an action: `mj_imagine`, `mj_upscale`, `mj_high_variation`, ... */
export function modelOfAction(action: string): string {
  return action === MjAction.SwapFace ? 'swap_face' : `mj_${action.toLowerCase()}`;
}

/** The action a button's customId stands for (new-api's order of checks), or null for an unknown button. */
export function actionOfCustomId(customId: string): MjAction | null {
  if (customId.includes('MJ::JOB::upsample')) return MjAction.Upscale;
  if (customId.includes('MJ::JOB::variation::')) return MjAction.Variation;
  if (customId.includes('MJ::JOB::reroll::')) return MjAction.Reroll;
  if (customId.includes('MJ::Outpaint::')) return MjAction.Zoom;
  if (customId.includes('MJ::CustomZoom::')) return MjAction.CustomZoom;
  if (customId.includes('MJ::Inpaint::')) return MjAction.Inpaint;
  if (customId.includes('MJ::JOB::pan_')) return MjAction.Pan;
  if (customId.includes('MJ::JOB::low_variation::')) return MjAction.LowVariation;
  if (customId.includes('MJ::JOB::high_variation::')) return MjAction.HighVariation;
  return null;
}

/** The answer to a submit, as midjourney-proxy sends it. */
export type SubmitAnswer = {
  code: number;
  description: string;
  result: string | null;
  properties: Record<string, unknown>;
};

/** Reads an upstream submit answer; null when the body is not one. */
export function parseSubmitAnswer(text: string): SubmitAnswer | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  if (typeof o.code !== 'number') return null;
  const result = o.result === null || o.result === undefined ? null : String(o.result);
  return {
    code: o.code,
    description: typeof o.description === 'string' ? o.description : '',
    result,
    properties:
      o.properties && typeof o.properties === 'object' && !Array.isArray(o.properties)
        ? (o.properties as Record<string, unknown>)
        : {},
  };
}

/** A task as midjourney-proxy's `task/{id}/fetch` and `list-by-condition` describe it (the fields read here). */
export type UpstreamTask = {
  id: string;
  action: string;
  status: string;
  progress: string;
  imageUrl: string;
  failReason: string;
  prompt: string;
  promptEn: string;
  description: string;
  state: string;
  submitTime: number;
  startTime: number;
  finishTime: number;
  buttons: unknown;
  properties: unknown;
};

const str = (v: unknown) => (typeof v === 'string' ? v : v === null || v === undefined ? '' : String(v));
const int = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : 0);

export function parseUpstreamTask(v: unknown): UpstreamTask | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  const id = str(o.id);
  if (!id) return null;
  return {
    id,
    action: str(o.action),
    status: str(o.status),
    progress: str(o.progress),
    imageUrl: str(o.imageUrl),
    failReason: str(o.failReason),
    prompt: str(o.prompt),
    promptEn: str(o.promptEn),
    description: str(o.description),
    state: str(o.state),
    submitTime: int(o.submitTime),
    startTime: int(o.startTime),
    finishTime: int(o.finishTime),
    buttons: o.buttons ?? null,
    properties: o.properties ?? null,
  };
}

/** A stored task row as the relay reads it. */
export type TaskRow = {
  id: number;
  code: number;
  userId: number;
  tokenId: number;
  group: string;
  action: string;
  mjId: string;
  prompt: string;
  promptEn: string;
  description: string;
  state: string;
  submitTime: number;
  startTime: number;
  finishTime: number;
  imageUrl: string;
  status: string;
  progress: string;
  failReason: string;
  channelId: number;
  quota: number;
  buttons: string;
  properties: string;
};

function json(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** The task as the client reads it (new-api's MidjourneyDto, the proxy's own task shape). */
export function taskDto(row: TaskRow, imageUrl: string = row.imageUrl) {
  return {
    id: row.mjId,
    action: row.action,
    customId: '',
    botType: '',
    prompt: row.prompt,
    promptEn: row.promptEn,
    description: row.description,
    state: row.state,
    submitTime: row.submitTime,
    startTime: row.startTime,
    finishTime: row.finishTime,
    imageUrl,
    status: row.status,
    progress: row.progress,
    failReason: row.failReason,
    buttons: json(row.buttons) ?? [],
    maskBase64: '',
    properties: json(row.properties) ?? {},
  };
}

/** `--fast`, `--relax` and `--turbo` removed from a prompt (MjModeClearEnabled). */
export function clearMode(prompt: string): string {
  return prompt.replace(/\s*--(fast|relax|turbo)\b/g, '').trim();
}
