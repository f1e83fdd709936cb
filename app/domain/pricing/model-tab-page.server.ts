/**
 * The settings page's modelTab (GET /setting?tab=modelTab, POST intents model*): its data and its form actions,
 * kept here so app/routes/setting.tsx only dispatches.
 */
import { data, redirect } from '@remix-run/node';
import type { SessionUser } from '#app/domain/auth/session.server.ts';
import { isDomainError, UnauthorizedError } from '#app/domain/errors.ts';
import { clientIp } from '#app/domain/security/rate-limit.server.ts';
import { getFixedT } from '#app/i18n/i18n.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';
import {
  batchSet,
  deleteModel,
  type ModelRow,
  type ModelTabCtx,
  modelRows,
  PRICE_KEYS,
  resetModelRatios,
  saveJson,
  saveModel,
  unsetModels,
} from './model-tab.server.ts';

export const MODEL_TAB = '/setting?tab=modelTab';
export const MODEL_DIALOGS = ['add', 'edit', 'delete', 'reset'] as const;
export type ModelDialog = (typeof MODEL_DIALOGS)[number];
export const MODEL_TAB_INTENTS = [
  'modelSave',
  'modelDelete',
  'modelBatch',
  'modelJson',
  'modelReset',
] as const;
const PAGE_SIZE = 10;

export type ModelTabData = {
  rows: ModelRow[];
  total: number;
  page: number;
  pages: number;
  q: string;
  unset: string[];
  json: Record<(typeof PRICE_KEYS)[number], string>;
  dialog: ModelDialog | null;
  /** The row a dialog is about (edit / delete), or the name to prefill (add). */
  model: ModelRow | null;
};

export async function loadModelTab(
  ctx: Pick<ModelTabCtx, 'em' | 'options'>,
  url: URL,
): Promise<ModelTabData> {
  const q = (url.searchParams.get('mq') ?? '').trim();
  const all = modelRows(ctx.options);
  const matching = q ? all.filter((r) => r.name.toLowerCase().includes(q.toLowerCase())) : all;
  const pages = Math.max(1, Math.ceil(matching.length / PAGE_SIZE));
  const page = Math.min(pages, Math.max(1, Number.parseInt(url.searchParams.get('p') ?? '1', 10) || 1));
  const rawDialog = url.searchParams.get('mdialog');
  const dialog = (MODEL_DIALOGS as readonly string[]).includes(rawDialog ?? '')
    ? (rawDialog as ModelDialog)
    : null;
  const name = url.searchParams.get('model') ?? '';
  const found = all.find((r) => r.name === name) ?? null;
  const model = dialog === 'add' ? { name } : found;
  const json = {} as ModelTabData['json'];
  for (const key of PRICE_KEYS) json[key] = JSON.stringify(ctx.options.get(key), null, 2);
  return {
    rows: matching.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE),
    total: matching.length,
    page,
    pages,
    q,
    unset: await unsetModels(ctx),
    json,
    // An edit or delete of a row that no longer exists shows the table instead.
    dialog: dialog && (dialog === 'add' || dialog === 'reset' || found) ? dialog : null,
    model,
  };
}

export function isModelTabIntent(intent: string): boolean {
  return (MODEL_TAB_INTENTS as readonly string[]).includes(intent);
}

export type ModelTabReply = { intent: string; error?: string; fieldErrors?: Record<string, string[]> };

/**
 * POST /setting intent=model*: PRG with a toast on success; a refusal re-renders the tab with the message
 * (HTTP 400, or 403 for a non-admin).
 */
export async function modelTabAction(
  request: Request,
  services: ConsoleServices,
  user: SessionUser,
  form: FormData,
) {
  const t = await getFixedT(request);
  const ctx: ModelTabCtx = {
    em: services.orm.em.fork(),
    options: services.options,
    actor: user,
    t,
    ip: clientIp(request, services).slice(0, 64),
  };
  const text = (key: string) => {
    const v = form.get(key);
    return typeof v === 'string' ? v : '';
  };
  const intent = text('intent');
  const wanted = safeRedirect(text('back'), MODEL_TAB, { base: request });
  const back = wanted.startsWith(MODEL_TAB) ? wanted : MODEL_TAB;
  const ok = (message: string) => redirectWithToast(back, { type: 'success', message });
  try {
    switch (intent) {
      case 'modelSave':
        await saveModel(ctx, {
          name: text('name'),
          original: text('original'),
          price: text('price'),
          ratio: text('ratio'),
          completion: text('completion'),
        });
        return ok(t('pricing:toast.saved'));
      case 'modelDelete':
        await deleteModel(ctx, text('name'));
        return ok(t('pricing:toast.deleted'));
      case 'modelBatch': {
        const count = await batchSet(ctx, {
          models: form.getAll('models'),
          mode: text('mode'),
          value: text('value'),
          value2: text('value2'),
        });
        return ok(t('pricing:toast.batchSaved', { count }));
      }
      case 'modelJson':
        // A text area left out of the form keeps its table.
        await saveJson(
          ctx,
          Object.fromEntries(PRICE_KEYS.filter((k) => form.has(k)).map((k) => [k, text(k)])),
        );
        return ok(t('pricing:toast.saved'));
      case 'modelReset':
        await resetModelRatios(ctx);
        return redirectWithToast(MODEL_TAB, { type: 'success', message: t('pricing:toast.reset') });
      default:
        return redirect(MODEL_TAB);
    }
  } catch (error) {
    if (isDomainError(error) && !(error instanceof UnauthorizedError)) {
      const fieldErrors = 'fieldErrors' in error ? (error.fieldErrors as Record<string, string[]>) : {};
      return data<ModelTabReply>(
        { intent, error: error.message, fieldErrors },
        { status: error.status === 403 ? 403 : 400 },
      );
    }
    throw error;
  }
}
