/**
 * Settings "other" tab (seed 000 §2 "other tab (personalisation)"): system information (version, start time),
 * the check for a newer release, and the branding options, each with its own save button and confirmation:
 * API address list, Notice, SystemName, Logo, HomePageContent, About, Footer.
 *
 * The update check asks a releases URL that answers GitHub's "latest release" JSON (`tag_name`, `html_url`,
 * `body`, `published_at`): RELEASES_URL (server/config.ts). It has no default: a deployment names the repository
 * it follows (e.g. https://api.github.com/repos/<owner>/<repo>/releases/latest); unset, the check says so.
 */
import { data } from '@remix-run/node';
import type { OptionService } from '@switchyard/db/options/service.ts';
import type { SessionUser } from '#app/domain/auth/session.server.ts';
import { ForbiddenError } from '#app/domain/errors.ts';
import {
  loadOptionForms,
  type OptionFormSpec,
  type OptionFormValues,
} from '#app/domain/settings/option-form.server.ts';
import { type OptionsCtx, requireOptionsAdmin } from '#app/domain/settings/options.server.ts';
import { getFixedT } from '#app/i18n/i18n.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';

export const CHECK_UPDATE_INTENT = 'checkUpdate';
const UPDATE_TIMEOUT_MS = 5000;

export const OTHER_FORMS = [
  { tab: 'other', id: 'apiAddressList', keys: ['apiAddressList'], saved: 'otherTab.saved.apiAddressList' },
  { tab: 'other', id: 'notice', keys: ['Notice'], saved: 'otherTab.saved.notice' },
  { tab: 'other', id: 'systemName', keys: ['SystemName'], saved: 'otherTab.saved.systemName' },
  { tab: 'other', id: 'logo', keys: ['Logo'], saved: 'otherTab.saved.logo' },
  { tab: 'other', id: 'homePageContent', keys: ['HomePageContent'], saved: 'otherTab.saved.homePageContent' },
  { tab: 'other', id: 'about', keys: ['About'], saved: 'otherTab.saved.about' },
  { tab: 'other', id: 'footer', keys: ['Footer'], saved: 'otherTab.saved.footer' },
] as const satisfies readonly OptionFormSpec[];

export type OtherTabData = OptionFormValues & {
  version: string;
  /** unix seconds */
  startTime: number;
};

export function loadOtherTab(
  options: Pick<OptionService, 'getRaw'>,
  system: { version: string; startedAt: number },
  viewer: Pick<SessionUser, 'role'>,
): OtherTabData {
  return {
    ...loadOptionForms(options, OTHER_FORMS, viewer),
    version: system.version,
    startTime: system.startedAt,
  };
}

export type UpdateCheck =
  | { kind: 'latest'; current: string }
  | { kind: 'newer'; current: string; tag: string; url: string; notes: string; publishedAt: string }
  | { kind: 'failed' }
  /** RELEASES_URL is not set: nothing to ask. */
  | { kind: 'unconfigured' };

/** Numeric parts of 'v1.2.3' / '1.2' (pre-release suffixes ignored); null when the text is not a version. */
function versionParts(text: string): number[] | null {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(text.trim());
  return m ? [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)] : null;
}

/** Whether `tag` is a later release than `current` (different text when either is not a version number). */
export function isNewerVersion(tag: string, current: string): boolean {
  const a = versionParts(tag);
  const b = versionParts(current);
  if (!a || !b) return tag.trim() !== current.trim();
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return (a[i] ?? 0) > (b[i] ?? 0);
  return false;
}

/**
 * Asks the releases URL for the latest release. Any failure (offline, timeout, non-2xx, not the expected JSON)
 * is `failed`: the tab says 'failed to check for updates, try later' (seed 000 §8).
 */
export async function checkForUpdate(
  releasesUrl: string,
  current: string,
  timeoutMs = UPDATE_TIMEOUT_MS,
): Promise<UpdateCheck> {
  try {
    const res = await fetch(releasesUrl, {
      headers: { Accept: 'application/vnd.github+json', 'User-Agent': 'switchyard' },
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'follow',
    });
    if (!res.ok) {
      await res.body?.cancel();
      return { kind: 'failed' };
    }
    const body = (await res.json()) as unknown;
    if (typeof body !== 'object' || body === null) return { kind: 'failed' };
    const release = body as Record<string, unknown>;
    const tag = release.tag_name;
    if (typeof tag !== 'string' || tag === '') return { kind: 'failed' };
    if (!isNewerVersion(tag, current)) return { kind: 'latest', current };
    const url =
      typeof release.html_url === 'string' && /^https?:\/\//.test(release.html_url) ? release.html_url : '';
    return {
      kind: 'newer',
      current,
      tag: tag.slice(0, 100),
      url,
      notes: typeof release.body === 'string' ? release.body.slice(0, 20_000) : '',
      publishedAt: typeof release.published_at === 'string' ? release.published_at.slice(0, 40) : '',
    };
  } catch {
    return { kind: 'failed' };
  }
}

/** POST /setting?tab=other intent=checkUpdate (administrators): the answer is shown under the button. */
export async function checkUpdateAction(
  ctx: Pick<OptionsCtx, 'actor' | 't'>,
  system: { version: string; releasesUrl?: string },
): Promise<{ intent: typeof CHECK_UPDATE_INTENT; update: UpdateCheck }> {
  requireOptionsAdmin(ctx);
  return {
    intent: CHECK_UPDATE_INTENT,
    update: system.releasesUrl
      ? await checkForUpdate(system.releasesUrl, system.version)
      : { kind: 'unconfigured' },
  };
}

/** The page's answer to the update check: the result, or 403 with the message for a non-admin. */
export async function checkUpdatePageAction(request: Request, services: ConsoleServices, user: SessionUser) {
  const t = await getFixedT(request);
  try {
    return data(await checkUpdateAction({ actor: user, t }, services), {
      headers: { 'Cache-Control': 'no-store' },
    });
  } catch (error) {
    if (!(error instanceof ForbiddenError)) throw error;
    return data({ intent: CHECK_UPDATE_INTENT, error: error.message }, { status: 403 });
  }
}
