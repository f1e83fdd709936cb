/**
 * Property-based fuzzing of every console JSON route (issue 13, item 7): each route file of app/routes/api.*.ts,
 * called as its loader/action with a real relay (gRPC) and a real PostgreSQL, as every role (anonymous, user,
 * admin, root), with hostile bodies, list filters and path parameters. Asserts: never a 5xx, and a refused
 * request (HTTP >= 400 or success false) changes nothing (checksum of the console's tables).
 *
 * FUZZ_RUNS=n sets the runs per route, FUZZ_SEED=s replays a run, FUZZ_COUNT=1 tallies every 5xx.
 */
import { readdirSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '#app/domain/auth/session.server.ts';
import { createRelayClient, type RelayClient } from '#app/grpc/relay-client.server.ts';
import type { ConsoleServices } from '#app/services.server.ts';
import { type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
import { consoleServices, signedInUser, type Who } from '../integration/console-harness.ts';
import { type Stack, seedChannel, seedToken, setOptions, startStack } from '../integration/relay-stack.ts';
import { mutatedObject, mutatedQuery, nastyValue, pathParam } from './arbitraries.ts';
import { ROUTES, routeParams, routePath } from './console-routes.ts';
import { COUNT_ONLY, checksum, newTally, params, runs, SEED, show } from './harness.ts';

const SECRET = 'fuzz-internal-secret-0123456789abcdef';
const ROUTE_DIR = new URL('../../app/routes/', import.meta.url);
const API_FILES = readdirSync(ROUTE_DIR)
  .filter((f) => /^api\..*\.ts$/.test(f) && !f.endsWith('.test.ts'))
  .sort();

let stack: Stack;
let fake: FakeOpenAI;
let relay: RelayClient;
let services: ConsoleServices;
const who: Record<'anonymous' | 'user' | 'admin' | 'root', Who | null> = {
  anonymous: null,
  user: null,
  admin: null,
  root: null,
};
const tally = newTally();

beforeAll(async () => {
  fake = await startFakeOpenAI();
  stack = await startStack({ suffix: 'fuzz_console', env: { INTERNAL_API_SECRET: SECRET } });
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
    `[fuzz] console: ${tally.inputs} inputs fuzzed, ${tally.fivexx} answered 5xx, ${tally.changedOnRefusal} refusals changed state (seed ${SEED})` +
      (tally.examples.length ? `\n  ${tally.examples.slice(0, 200).join('\n  ')}` : ''),
  );
  relay?.close();
  await stack?.close();
  await fake?.close();
});

/** Puts the fuzzing principals back (a fuzzed request may log one out, ban, demote or delete one). */
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
  method: string;
  params: Record<string, string>;
  query: Record<string, string>;
  body: unknown;
  form: boolean;
};

function buildRequest(file: string, input: Input): Request {
  const url = new URL(`http://localhost${routePath(file, input.params)}`);
  for (const [k, v] of Object.entries(input.query)) url.searchParams.set(k, v);
  const headers = new Headers({ 'Accept-Language': 'en' });
  const principal = who[input.role];
  if (principal) {
    headers.set('Cookie', `sy_session=${principal.session}`);
    headers.set('New-Api-User', String(principal.id));
  }
  let body: BodyInit | undefined;
  if (input.method !== 'GET') {
    if (input.form && input.body && typeof input.body === 'object' && !Array.isArray(input.body)) {
      headers.set('Content-Type', 'application/x-www-form-urlencoded');
      body = new URLSearchParams(
        Object.entries(input.body as Record<string, unknown>).map(([k, v]) => [
          k,
          typeof v === 'string' ? v : (JSON.stringify(v) ?? ''),
        ]),
      ).toString();
    } else {
      headers.set('Content-Type', 'application/json');
      body = JSON.stringify(input.body ?? null);
    }
  }
  return new Request(url, { method: input.method, headers, body });
}

async function call(
  file: string,
  input: Input,
): Promise<{ status: number; success: boolean | null; text: string }> {
  const mod = (await import(new URL(file, ROUTE_DIR).href)) as {
    loader?: (args: never) => unknown;
    action?: (args: never) => unknown;
  };
  const fn = input.method === 'GET' ? mod.loader : mod.action;
  if (!fn) return { status: 405, success: false, text: '' };
  const params: Record<string, string> = {};
  for (const p of routeParams(file)) params[p] = input.params[p] ?? '';
  const request = buildRequest(file, input);
  let res: Response;
  try {
    res = (await fn({ request, context: { services }, params } as never)) as Response;
  } catch (thrown) {
    // Remix turns a thrown Response into that response, anything else into a 500.
    if (thrown instanceof Response) res = thrown;
    else return { status: 500, success: null, text: String((thrown as Error)?.stack ?? thrown) };
  }
  if (!(res instanceof Response)) return { status: 200, success: null, text: '' };
  const text = await res.text();
  let success: boolean | null = null;
  try {
    const parsed = JSON.parse(text) as { success?: unknown };
    if (typeof parsed?.success === 'boolean') success = parsed.success;
  } catch {}
  return { status: res.status, success, text };
}

function inputFor(file: string): fc.Arbitrary<Input> {
  const spec = ROUTES[file]!;
  const paramNames = routeParams(file);
  return fc.record({
    role: fc.constantFrom('anonymous', 'user', 'admin', 'root', 'root', 'admin'),
    method: fc.oneof(
      { weight: 9, arbitrary: fc.constantFrom(...spec.methods) },
      { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH') },
    ),
    params: fc.record(Object.fromEntries(paramNames.map((p) => [p, pathParam]))) as fc.Arbitrary<
      Record<string, string>
    >,
    query: mutatedQuery(spec.query ?? {}),
    body: spec.body ? mutatedObject(spec.body) : fc.oneof(fc.constant(undefined), nastyValue),
    form: fc.constantFrom(false, false, true),
  });
}

describe('console JSON routes under fuzzing', () => {
  it('the route list covers every app/routes/api.* file', () => {
    expect(Object.keys(ROUTES).sort()).toEqual(API_FILES);
  });

  for (const file of API_FILES) {
    it(`${file}: no 5xx, and a refusal changes nothing`, async () => {
      if (!ROUTES[file]) throw new Error(`${file} has no entry in tests/fuzz/console-routes.ts`);
      await fc.assert(
        fc.asyncProperty(inputFor(file), async (input) => {
          await restorePrincipals();
          const before = await checksum(stack);
          const res = await call(file, input);
          tally.inputs++;
          const refused = res.status >= 400 || res.success === false;
          const after = refused ? await checksum(stack) : before;
          if (res.status >= 500) {
            tally.fivexx++;
            tally.examples.push(
              `${file} ${input.role} ${input.method} ${show(input.params)} ${show(input.query)} ${show(input.body)} -> ${res.status} ${res.text.slice(0, 200)}`,
            );
          }
          if (after !== before) {
            tally.changedOnRefusal++;
            tally.examples.push(
              `CHANGED ${file} ${input.role} ${input.method} ${show(input.query)} ${show(input.body)} -> ${res.status} ${res.text.slice(0, 200)}`,
            );
          }
          if (COUNT_ONLY) return true;
          expect(res.status, `5xx: ${res.text.slice(0, 500)}`).toBeLessThan(500);
          expect(after, `a refused request (${res.status} ${res.text.slice(0, 300)}) changed state`).toBe(
            before,
          );
          return true;
        }),
        params(runs(40)),
      );
    }, 120_000);
  }
});
