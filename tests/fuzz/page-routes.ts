/**
 * Every page route with an action (app/routes/*.tsx and the few *.ts page routes) with each `intent` it answers
 * and a plausible form for it, as the page's own <form> posts it without JavaScript. The page fuzz suite starts
 * from these and breaks fields; `pages.fuzz.test.ts` fails when a route file with an action has no entry here,
 * so a new page action cannot be left out.
 */
import { MODEL_TAB_INTENTS } from '#app/domain/pricing/model-tab-page.server.ts';
import { CHECK_UPDATE_INTENT } from '#app/domain/settings/other.server.ts';
import { TEST_MAIL_INTENT } from '#app/domain/settings/system.server.ts';
import { OPTION_FORMS } from '#app/domain/settings/tab-forms.server.ts';
import { ROUTES } from './console-routes.ts';

/** Form fields: one value, or several under one name (checkbox lists, `ids`). */
export type Form = Record<string, string | string[]>;

export type PageSpec = {
  /** intent value -> a plausible form (the `intent` field is added; '' = a form without one) */
  intents: Record<string, Form>;
};

/** A JSON base of console-routes.ts as form text (numbers and booleans as the inputs post them). */
function asForm(base: Record<string, unknown> | undefined, drop: string[] = []): Form {
  const out: Form = {};
  for (const [k, v] of Object.entries(base ?? {})) {
    if (drop.includes(k)) continue;
    out[k] = typeof v === 'string' ? v : Array.isArray(v) ? v.map(String) : String(v);
  }
  return out;
}

const channel = asForm(ROUTES['api.channel._index.ts']!.body, ['id', 'mode']);
const token = asForm(ROUTES['api.token._index.ts']!.body, ['id']);
const user = asForm(ROUTES['api.user._index.ts']!.body, ['id']);
const redemption = asForm(ROUTES['api.redemption._index.ts']!.body, ['id', 'status_only']);
const version = asForm(ROUTES['api.version.ts']!.body, ['Id']);

/** Option forms of the settings tabs: each key with a neutral value (the fuzzer breaks some). */
const optionIntents: Record<string, Form> = Object.fromEntries(
  OPTION_FORMS.map((f) => [`option:${f.id}`, Object.fromEntries(f.keys.map((k) => [k, '']))]),
);

export const PAGE_ROUTES: Record<string, PageSpec> = {
  '_index.tsx': { intents: { 'dismiss-notice': { hash: 'abc' } } },
  'channel.$id.[test].tsx': { intents: { '': { model: 'gpt-4o', redirectTo: '/channel' } } },
  'channel.$id.delete.tsx': { intents: { '': { redirectTo: '/channel' } } },
  'channel.$id.edit.tsx': { intents: { '': { ...channel, redirectTo: '/channel' } } },
  'channel._index.tsx': {
    intents: {
      status: { id: '1', status: '2', redirectTo: '/channel' },
      copy: { id: '1', redirectTo: '/channel' },
      tagStatus: { tag: 'fuzz', status: '1', redirectTo: '/channel' },
      batchDelete: { ids: ['1', '2'], redirectTo: '/channel' },
      batchTag: { ids: ['1'], tag: 'fuzz', redirectTo: '/channel' },
      deleteDisabled: { redirectTo: '/channel' },
      fix: { redirectTo: '/channel' },
      balance: { id: '1', name: 'fuzz', redirectTo: '/channel' },
      balanceAll: { redirectTo: '/channel' },
    },
  },
  'channel.new.tsx': { intents: { '': channel, fetch_models: channel } },
  'channel.tag.tsx': {
    intents: { '': { ...asForm(ROUTES['api.channel.tag._index.ts']!.body), redirectTo: '/channel' } },
  },
  'channel.test-all.tsx': { intents: { '': {} } },
  'log.clear.tsx': { intents: { '': { before: '2026-01-01T00:00', redirectTo: '/log' } } },
  'login.tsx': {
    intents: {
      login: { username: 'fuzzuser', password: 'fuzzpass1', redirectTo: '/token' },
      oauth: { provider: 'github', redirectTo: '/token' },
      wechat: { code: '123456', redirectTo: '/token' },
    },
  },
  'logout.ts': { intents: { '': {} } },
  'pg.chat.completions.ts': { intents: { '': { model: 'gpt-4o', messages: '[]' } } },
  'playground.tsx': {
    intents: {
      send: { question: 'hi', model: 'gpt-4o', group: '', history: '[]' },
      clear: { history: '[]' },
      group: { group: 'default', question: 'hi' },
    },
  },
  'preferences.ts': {
    intents: {
      theme: { theme: 'dark', redirectTo: '/' },
      language: { lng: 'en', redirectTo: '/' },
      sidebar: { collapsed: 'true', redirectTo: '/' },
      pageSize: { pageSize: '20', redirectTo: '/' },
      timeZone: { tz: 'Asia/Shanghai', redirectTo: '/' },
    },
  },
  'redemption.$id.delete.tsx': { intents: { '': { redirectTo: '/redemption' } } },
  'redemption.$id.edit.tsx': {
    intents: { update: { name: 'fuzz', quota: '1000', redirectTo: '/redemption' } },
  },
  'redemption._index.tsx': {
    intents: {
      status: { id: '1', status: '2', redirectTo: '/redemption' },
      delete: { id: '1', redirectTo: '/redemption' },
      create: redemption,
      update: { id: '1', name: 'fuzz', quota: '1000', redirectTo: '/redemption' },
    },
  },
  'redemption.download.ts': { intents: { '': { keys: ['0123456789abcdef0123456789abcdef'] } } },
  'redemption.new.tsx': { intents: { create: redemption } },
  'register.tsx': {
    intents: {
      register: asForm(ROUTES['api.user.register.ts']!.body),
      'send-code': { email: 'fuzz@example.com', username: 'fuzzreg' },
    },
  },
  'reset.tsx': { intents: { '': { email: 'fuzz@example.com' } } },
  'setting.tsx': {
    intents: {
      ...optionIntents,
      ...Object.fromEntries(
        MODEL_TAB_INTENTS.map((i) => [i, { model: 'gpt-4o', ratio: '1', completion_ratio: '1', price: '' }]),
      ),
      [CHECK_UPDATE_INTENT]: {},
      [TEST_MAIL_INTENT]: {},
      transfer: { quota: '1' },
      password: { password: 'fuzzpass2', password2: 'fuzzpass2', original_password: 'fuzzpass1' },
      delete: { confirm: 'nobody', password: 'x' },
      token: {},
      notify: asForm(ROUTES['api.user.setting.ts']!.body),
      sendEmailCode: { email: 'fuzz@example.com' },
      bindEmail: { email: 'fuzz@example.com', code: '123456' },
      bindWechat: { code: '123456' },
      oauthBind: { provider: 'github' },
      models: { expanded: 'true' },
    },
  },
  'token.$id.delete.tsx': { intents: { '': { redirectTo: '/token' } } },
  'token.$id.edit.tsx': { intents: { '': { ...token, redirectTo: '/token' } } },
  'token._index.tsx': { intents: { status: { id: '1', status: '2', redirectTo: '/token' } } },
  'token.new.tsx': { intents: { '': token } },
  'topup.tsx': {
    intents: {
      redeem: { key: '0123456789abcdef0123456789abcdef' },
      pay: { amount: '10', pay_method: '1', js: '1' },
    },
  },
  'user.$id.delete.tsx': { intents: { '': { redirectTo: '/user' } } },
  'user._index.tsx': {
    intents: {
      manage: { id: '2', action: 'disable', redirectTo: '/user' },
      create: user,
      update: { ...user, id: '2', redirectTo: '/user' },
    },
  },
  'user.edit.tsx': {
    intents: { '': { username: 'fuzzself', display_name: 'Fuzz', password: '', original_password: '' } },
  },
  'user.edit_.$id.tsx': {
    intents: { update: { ...user, redirectTo: '/user' }, addQuota: { add_quota: '10', redirectTo: '/user' } },
  },
  'user.new.tsx': { intents: { create: user } },
  'user_.reset.tsx': { intents: { '': { email: 'fuzz@example.com', token: 'x' } } },
  'version.$id.delete.tsx': { intents: { '': { redirectTo: '/version' } } },
  'version.$id.edit.tsx': { intents: { '': { ...version, redirectTo: '/version' } } },
  'version._index.tsx': { intents: { delete: { id: '1', redirectTo: '/version' } } },
  'version.new.tsx': { intents: { '': version } },
};

/**
 * `channel.$id.[test].tsx` -> `/channel/{id}/test`; `_index` -> `?index` (how Remix addresses an index route's
 * action); `user_.reset` -> `/user/reset`; `chat.($id)` -> `/chat`.
 */
export function pagePath(file: string, params: Record<string, string>): string {
  const stem = file.replace(/\.tsx?$/, '');
  const segments = stem
    .split('.')
    .filter((s) => s !== '_index' && !/^\(.*\)$/.test(s))
    .map((s) =>
      s.startsWith('$')
        ? encodeURIComponent((params[s.slice(1)] ?? '').toWellFormed())
        : s.replace(/^\[(.*)\]$/, '$1').replace(/_$/, ''),
    );
  const path = `/${segments.join('/')}`;
  return stem.endsWith('_index') ? `${path}?index` : path;
}

export function pageParams(file: string): string[] {
  return file
    .replace(/\.tsx?$/, '')
    .split('.')
    .filter((s) => s.startsWith('$'))
    .map((s) => s.slice(1));
}
