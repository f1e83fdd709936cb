import { data } from '@remix-run/node';
import { InputError, isDomainError } from '#app/domain/errors.ts';
import type { VersionFormValues } from '#app/domain/versions/version-ui.tsx';
import {
  createVersion,
  parseInput,
  updateVersion,
  type VersionsCtx,
  versionFormSchema,
  versionUpdateSchema,
} from '#app/domain/versions/versions.server.ts';
import { safeRedirect } from '#app/utils/safe-redirect.ts';
import { createToastHeader, redirectWithToast } from '#app/utils/toast.server.ts';

export type VersionFormReply = {
  ok: boolean;
  error: string | null;
  fieldErrors: Record<string, string[]>;
  values: VersionFormValues;
};

type FormData_ = ReturnType<typeof data<VersionFormReply>>;

const FIELDS = ['Version', 'DownUrl', 'FileMd5', 'ForceIds', 'Force', 'OsType', 'Remark'] as const;

/**
 * The page action behind /version/new and /version/{id}/edit (and the modal's fetcher, `_fetcher=1`): the same
 * createVersion / updateVersion as POST / PUT /api/version. A refusal answers 400 with the message, the field
 * errors and the submitted values; success redirects to the list with a flash toast (PRG), or for the fetcher
 * answers data + the toast cookie so the list revalidates and the modal closes.
 */
export async function submitVersionForm(
  ctx: VersionsCtx,
  request: Request,
  id: number | null,
): Promise<Response | FormData_> {
  const form = Object.fromEntries(await request.formData());
  const values: VersionFormValues = {};
  for (const key of FIELDS) values[key] = typeof form[key] === 'string' ? (form[key] as string) : '';
  try {
    if (id === null) await createVersion(ctx, parseInput(ctx, versionFormSchema, values));
    else await updateVersion(ctx, parseInput(ctx, versionUpdateSchema, { ...values, Id: id }));
  } catch (error) {
    if (isDomainError(error) && error.status < 500) {
      const fieldErrors = error instanceof InputError ? error.fieldErrors : {};
      const reply: VersionFormReply = { ok: false, error: error.message, fieldErrors, values };
      return data(reply, { status: 400 });
    }
    throw error;
  }
  const toast = {
    type: 'success' as const,
    message: ctx.t(id === null ? 'versions:toast.created' : 'versions:toast.updated'),
  };
  if (form._fetcher === '1') {
    const reply: VersionFormReply = { ok: true, error: null, fieldErrors: {}, values };
    return data(reply, { headers: { 'Set-Cookie': await createToastHeader(toast) } });
  }
  return redirectWithToast(safeRedirect(form.redirectTo, '/version'), toast);
}
