import type { ActionFunctionArgs, LoaderFunctionArgs } from '@remix-run/node';
import { tokensApi } from '#app/domain/tokens/http.server.ts';
import {
  createTokenSchema,
  createTokens,
  listTokens,
  pageQuerySchema,
  parseInput,
  setTokenStatus,
  statusOnlySchema,
  updateToken,
  updateTokenSchema,
} from '#app/domain/tokens/tokens.server.ts';
import { methodNotAllowed, ok, readBody } from '#app/utils/envelope.server.ts';

/** GET /api/token/?p={1-based; 0 = 1}&size={1..100}: the caller's tokens, data { items, page, total, page_size }. */
export function loader({ request, context }: LoaderFunctionArgs) {
  return tokensApi(request, context, async (ctx) => {
    const q = parseInput(ctx, pageQuerySchema, Object.fromEntries(new URL(request.url).searchParams));
    return ok(await listTokens(ctx, { page: q.p, size: q.size }));
  });
}

/**
 * POST /api/token/ {name, remain_quota, unlimited_quota, expired_time, model_limits_enabled, model_limits,
 * allow_ips, group, count?} -> the created tokens; PUT /api/token/ {id, ...same, status?};
 * PUT /api/token/?status_only=true {id, status} (1 enable, 2 disable).
 */
export function action({ request, context }: ActionFunctionArgs) {
  return tokensApi(request, context, async (ctx) => {
    const body = await readBody(request);
    if (request.method === 'POST') {
      return ok(await createTokens(ctx, parseInput(ctx, createTokenSchema, body)));
    }
    if (request.method === 'PUT') {
      const statusOnly = new URL(request.url).searchParams.get('status_only');
      if (statusOnly === 'true' || statusOnly === '1')
        return ok(await setTokenStatus(ctx, parseInput(ctx, statusOnlySchema, body)));
      return ok(await updateToken(ctx, parseInput(ctx, updateTokenSchema, body)));
    }
    return methodNotAllowed('GET, POST, PUT');
  });
}
