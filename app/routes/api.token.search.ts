import type { LoaderFunctionArgs } from '@remix-run/node';
import { tokensApi } from '#app/domain/tokens/http.server.ts';
import { parseInput, searchQuerySchema, searchTokens } from '#app/domain/tokens/tokens.server.ts';
import { ok } from '#app/utils/envelope.server.ts';

/** GET /api/token/search?keyword&token&p&size: the caller's tokens by name and key (exact or prefix, sk- optional). */
export function loader({ request, context }: LoaderFunctionArgs) {
  return tokensApi(request, context, async (ctx) => {
    const q = parseInput(ctx, searchQuerySchema, Object.fromEntries(new URL(request.url).searchParams));
    return ok(await searchTokens(ctx, { keyword: q.keyword, token: q.token, page: q.p, size: q.size }));
  });
}
