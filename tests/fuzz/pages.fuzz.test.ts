/**
 * Property-based fuzzing of every page action (issue 23, item 9): each app/routes file that exports an `action`
 * outside /api, with each of its intents, posted as a document form the way a browser without JavaScript posts
 * it (form-encoded or multipart, same-origin `Sec-Fetch-*` and `Origin`, the session cookie) by a visitor, a
 * user, an admin and root, with hostile field values (CR/LF, NUL, control characters, very long text). Called as
 * the route's action on a real PostgreSQL and a real relay, with Remix's rules for what the action returns or
 * throws (a thrown Response or `data()` is that answer; anything else, or headers a Response cannot carry, is a
 * 500).
 *
 * Asserts: never a 5xx, and a refusal changes nothing (the checksum of fuzz/harness.ts). A refusal is how pages
 * answer bad input: a 4xx (the page re-rendered with the message), a redirect with an error toast (PRG), or a
 * 200 whose data carries `error`, `fieldErrors` or `ok: false`.
 *
 * FUZZ_RUNS=n sets the runs per intent, FUZZ_SEED=s replays a run, FUZZ_COUNT=1 tallies every 5xx.
 */
import { readdirSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '#app/domain/auth/session.server.ts';
import { createRelayClient, type RelayClient } from '#app/grpc/relay-client.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';
import { getToast } from '#app/utils/toast.server.ts';
import { pageInputRefusal } from '../../server/page-input.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
import { consoleServices, signedInUser, type Who } from '../integration/console-harness.ts';
import { type Stack, seedChannel, seedToken, setOptions, startStack } from '../integration/relay-stack.ts';
import { formString, mutatedForm, pathParam } from './arbitraries.ts';
import { COUNT_ONLY, checksum, newTally, params, runs, SEED, show } from './harness.ts';
import { type Form, PAGE_ROUTES, pageParams, pagePath } from './page-routes.ts';

const SECRET = 'fuzz-pages-internal-secret-0123456789ab';
const ROUTE_DIR = new URL('../../app/routes/', import.meta.url);
const ORIGIN = 'http://localhost';

/** Every route file outside /api that exports an action (found by importing it, so none is missed). */
async function pageActionFiles(): Promise<string[]> {
  const files = readdirSync(ROUTE_DIR).filter(
    (f) => /\.tsx?$/.test(f) && !f.startsWith('api.') && !/\.test\.tsx?$/.test(f),
  );
  const out: string[] = [];
  for (const f of files) {
    const mod = (await import(new URL(f, ROUTE_DIR).href)) as { action?: unknown };
    if (typeof mod.action === 'function') out.push(f);
  }
  return out.sort();
}

let stack: Stack;
let fake: FakeOpenAI;
let relay: RelayClient;
let services: ConsoleServices;
const who: Record<'visitor' | 'user' | 'admin' | 'root', Who | null> = {
  visitor: null,
  user: null,
  admin: null,
  root: null,
};
const tally = newTally();

beforeAll(async () => {
  fake = await startFakeOpenAI();
  stack = await startStack({ suffix: 'fuzz_pages', env: { INTERNAL_API_SECRET: SECRET } });
  who.root = await signedInUser(stack, { quota: 1_000_000, role: 100 });
  who.admin = await signedInUser(stack, { quota: 1_000_000, role: 10 });
  who.user = await signedInUser(stack, { quota: 1_000_000 });
  for (const w of [who.root, who.admin, who.user]) await seedToken(stack, w!.id, { remainQuota: 1000 });
  await seedChannel(stack, { baseUrl: fake.url, models: ['gpt-4o'], name: 'fuzz' });
  await stack.sql(`update channels set tag = 'fuzz'`);
  await setOptions(stack, { ModelRatio: JSON.stringify({ 'gpt-4o': 1 }) });
  relay = createRelayClient(stack.relays[0]!.grpcAddress, { internalSecret: SECRET, timeoutMs: 5_000 });
  services = consoleServices(stack, relay);
}, 60_000);

afterAll(async () => {
  console.info(
    `[fuzz] pages: ${tally.inputs} document posts fuzzed, ${tally.fivexx} answered 5xx, ${tally.changedOnRefusal} refusals changed state (seed ${SEED})` +
      (tally.examples.length ? `\n  ${tally.examples.slice(0, 200).join('\n  ')}` : ''),
  );
  relay?.close();
  await stack?.close();
  await fake?.close();
});

/** Puts the principals back (a fuzzed post may log one out, ban, demote or delete one). */
async function restorePrincipals(): Promise<void> {
  for (const [role, w] of [
    [100, who.root],
    [10, who.admin],
    [1, who.user],
  ] as const) {
    if (!w) continue;
    await stack.sql(
      `update users set status = 1, role = ?, deleted_at = null where id = ? and (status <> 1 or role <> ? or deleted_at is not null)`,
      [role, w.id, role],
    );
    await stack.sql(
      `insert into sessions (id, user_id, expires_at) values (?, ?, now() + interval '1 hour') on conflict (id) do nothing`,
      [await sha256Hex(w.session), w.id],
    );
  }
}

type Input = {
  role: keyof typeof who;
  params: Record<string, string>;
  intent: string;
  form: Form;
  multipart: boolean;
};

/** The document post a browser sends for the form (same-origin navigation, the session cookie). */
function buildRequest(file: string, input: Input): Request {
  const headers = new Headers({
    'Accept-Language': 'en',
    Origin: ORIGIN,
    'Sec-Fetch-Site': 'same-origin',
    'Sec-Fetch-Mode': 'navigate',
    'Sec-Fetch-Dest': 'document',
  });
  const principal = who[input.role];
  if (principal) headers.set('Cookie', `sy_session=${principal.session}`);
  const entries: [string, string][] = [];
  if (input.intent) entries.push(['intent', input.intent]);
  for (const [k, v] of Object.entries(input.form))
    for (const one of Array.isArray(v) ? v : [v]) entries.push([k, one]);
  let body: BodyInit;
  if (input.multipart) {
    const fd = new FormData();
    for (const [k, v] of entries) fd.append(k, v);
    body = fd;
  } else {
    headers.set('Content-Type', 'application/x-www-form-urlencoded');
    body = new URLSearchParams(entries).toString();
  }
  return new Request(`${ORIGIN}${pagePath(file, input.params)}`, { method: 'POST', headers, body });
}

type Answer = { status: number; refused: boolean; text: string };

/** What a returned or thrown `data()` / object / Response becomes under Remix. */
async function answerOf(value: unknown): Promise<Answer> {
  if (value instanceof Response) {
    if (value.status >= 300 && value.status < 400) {
      const setCookie = value.headers.get('Set-Cookie') ?? '';
      const { toast } = await getToast(
        new Request(ORIGIN, { headers: { Cookie: setCookie.split(';')[0]! } }),
      );
      return {
        status: value.status,
        refused: toast?.type === 'error',
        text: `${value.headers.get('Location')} ${toast ? `${toast.type}: ${toast.message}` : ''}`,
      };
    }
    const text = await value.text();
    let payload: unknown = null;
    try {
      payload = JSON.parse(text);
    } catch {}
    return { status: value.status, refused: value.status >= 400 || refusedData(payload), text };
  }
  const wrapped = value as { type?: string; data?: unknown; init?: ResponseInit | null } | null;
  if (wrapped?.type === 'DataWithResponseInit') {
    // Remix builds the response's headers from init: a value a header cannot carry is a 500 there.
    new Headers(wrapped.init?.headers);
    const status = wrapped.init?.status ?? 200;
    return {
      status,
      refused: status >= 400 || refusedData(wrapped.data),
      text: show(wrapped.data),
    };
  }
  return { status: 200, refused: refusedData(value), text: show(value) };
}

function refusedData(payload: unknown): boolean {
  if (!payload || typeof payload !== 'object') return false;
  const p = payload as Record<string, unknown>;
  return (
    Boolean(p.error) ||
    p.ok === false ||
    p.success === false ||
    p.status === 'error' ||
    (typeof p.fieldErrors === 'object' && p.fieldErrors !== null && Object.keys(p.fieldErrors).length > 0)
  );
}

async function call(file: string, input: Input): Promise<Answer> {
  const mod = (await import(new URL(file, ROUTE_DIR).href)) as { action: (args: never) => unknown };
  const params: Record<string, string> = {};
  for (const p of pageParams(file)) params[p] = input.params[p] ?? '';
  try {
    const request = buildRequest(file, input);
    // What server/console.ts runs in front of every page action (the input layer for page forms).
    const refusal = await pageInputRefusal(request);
    if (refusal) return await answerOf(refusal);
    return await answerOf(await mod.action({ request, context: { services }, params } as never));
  } catch (thrown) {
    let error: unknown = thrown;
    try {
      if (thrown instanceof Response || (thrown as { type?: string })?.type === 'DataWithResponseInit')
        return await answerOf(thrown);
    } catch (inner) {
      error = inner;
    }
    return { status: 500, refused: true, text: String((error as Error)?.stack ?? error) };
  }
}

function inputFor(file: string): fc.Arbitrary<Input> {
  const spec = PAGE_ROUTES[file]!;
  const intents = Object.keys(spec.intents);
  const paramNames = pageParams(file);
  const known = fc.constantFrom(...intents).chain((intent) =>
    fc.record({
      intent: fc.constant(intent),
      form: mutatedForm(spec.intents[intent]!),
    }),
  );
  return fc
    .record({
      role: fc.constantFrom('visitor', 'user', 'admin', 'root', 'root', 'admin'),
      params: fc.record(
        Object.fromEntries(
          paramNames.map((p) => [
            p,
            fc.oneof({ weight: 3, arbitrary: fc.constant('1') }, { weight: 1, arbitrary: pathParam }),
          ]),
        ),
      ) as fc.Arbitrary<Record<string, string>>,
      intentAndForm: fc.oneof(
        { weight: 9, arbitrary: known },
        { weight: 1, arbitrary: fc.record({ intent: formString, form: fc.constant({} as Form) }) },
      ),
      multipart: fc.constantFrom(false, false, false, true),
    })
    .map(({ intentAndForm, ...rest }) => ({ ...rest, ...intentAndForm }));
}

const FILES = await pageActionFiles();

describe('page actions under fuzzed document posts', () => {
  it('the page route list covers every route file with an action', () => {
    expect(Object.keys(PAGE_ROUTES).sort()).toEqual(FILES);
  });

  for (const file of FILES) {
    it(`${file}: no 5xx, and a refusal changes nothing`, async () => {
      const spec = PAGE_ROUTES[file];
      if (!spec) throw new Error(`${file} has no entry in tests/fuzz/page-routes.ts`);
      await fc.assert(
        fc.asyncProperty(inputFor(file), async (input) => {
          await restorePrincipals();
          const before = await checksum(stack);
          const res = await call(file, input);
          tally.inputs++;
          const after = res.refused ? await checksum(stack) : before;
          const line = `${file} ${input.role} intent=${show(input.intent)} ${input.multipart ? 'multipart' : 'urlencoded'} ${show(input.params)} ${show(input.form)} -> ${res.status} ${res.text.slice(0, 200)}`;
          if (res.status >= 500) {
            tally.fivexx++;
            tally.examples.push(line);
          }
          if (after !== before) {
            tally.changedOnRefusal++;
            tally.examples.push(`CHANGED ${line}`);
          }
          if (COUNT_ONLY) return true;
          expect(res.status, `5xx: ${res.text.slice(0, 500)}`).toBeLessThan(500);
          expect(after, `a refused post (${res.status} ${res.text.slice(0, 300)}) changed state`).toBe(
            before,
          );
          return true;
        }),
        params(runs(Math.min(100, 20 * Object.keys(spec.intents).length))),
      );
    }, 120_000);
  }
});
