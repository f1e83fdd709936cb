import type { ActionFunctionArgs } from '@remix-run/node';
import { CODES_FILE_NAME, codesFileText } from '#app/domain/redemptions/constants.ts';
import { redemptionsPageCtx } from '#app/domain/redemptions/http.server.ts';
import { filterUnusedKeys } from '#app/domain/redemptions/redemptions.server.ts';
import { redirectWithToast } from '#app/utils/toast.server.ts';

/**
 * POST /redemption/download keys=<one per line>: the download of freshly generated codes without JavaScript.
 * Answers a text file (one code per line) as an attachment. Only an admin, and only real unused codes: the
 * route never echoes arbitrary text. The keys travel in the POST body only (never a cookie or a URL).
 */
export async function action({ request, context }: ActionFunctionArgs) {
  const ctx = await redemptionsPageCtx(request, context);
  const form = await request.formData();
  const raw = form
    .getAll('keys')
    .filter((v): v is string => typeof v === 'string')
    .join('\n');
  const keys = await filterUnusedKeys(ctx, raw.split(/\s+/));
  if (keys.length === 0)
    return redirectWithToast('/redemption', {
      type: 'error',
      message: ctx.t('redemptions:errors.nothingToDownload'),
    });
  return new Response(codesFileText(keys), {
    headers: {
      'Content-Type': 'text/plain; charset=utf-8',
      'Content-Disposition': `attachment; filename="${CODES_FILE_NAME}"`,
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
    },
  });
}

/** GET: nothing to show (the codes come only in a POST). */
export function loader() {
  return new Response(null, { status: 405, headers: { Allow: 'POST' } });
}
