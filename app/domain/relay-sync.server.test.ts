/**
 * Every console change the relay caches (a user's quota, status, group; a token's quota, status, limits) tells the
 * relay after the commit, and a relay that fails or is absent never fails the change. The relay here is a
 * recording RelayClient; the end-to-end effect against a real relay is in playground.server.test.ts (redeem).
 */

import { Session } from '@switchyard/db/entities/session.ts';
import { Token } from '@switchyard/db/entities/token.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createMemoryPubSub } from '@switchyard/db/pubsub.ts';
import { PLAINTEXT_BOX } from '@switchyard/db/security/secrets.ts';
import { createTestDatabase, type TestDatabase } from '@switchyard/db/testing.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createSessionToken, sha256Hex } from '#app/domain/auth/session.server.ts';
import { syncRelayAccounts } from '#app/domain/relay-sync.server.ts';
import { createMemoryRateLimiter } from '#app/domain/security/rate-limit.server.ts';
import type { RelayClient } from '#app/grpc/relay-client.server.ts';
import { RelayError } from '#app/grpc/relay-client.server.ts';
import { action as tokenAction } from '#app/routes/api.token._index.ts';
import { action as tokenByIdAction } from '#app/routes/api.token.$id.ts';
import { action as userAction } from '#app/routes/api.user._index.ts';
import { action as affTransferAction } from '#app/routes/api.user.aff_transfer.ts';
import { action as manageAction } from '#app/routes/api.user.manage.ts';
import { action as selfAction } from '#app/routes/api.user.self.ts';

let db: TestDatabase;
let options: OptionService;
let seq = 0;

type Change = { userIds?: number[]; tokenIds?: number[]; channels?: boolean };
let calls: Change[] = [];
/** When set, the relay fails every invalidation with this error. */
let failWith: Error | null = null;

const relay = {
  address: 'fake-relay:0',
  async invalidateAccounts(change: Change) {
    calls.push(change);
    if (failWith) throw failWith;
  },
} as unknown as RelayClient;

beforeAll(async () => {
  db = await createTestDatabase({ suffix: 'relay_sync' });
  options = new OptionService({ orm: db.orm, pubsub: createMemoryPubSub() });
  await options.load();
});
afterAll(async () => {
  await options?.close();
  await db?.drop();
});
beforeEach(() => {
  calls = [];
  failWith = null;
});

function context(withRelay: RelayClient | null = relay) {
  return {
    services: {
      orm: db.orm,
      options,
      relay: withRelay,
      version: 'test',
      startedAt: 0,
      secrets: PLAINTEXT_BOX,
      limiter: createMemoryRateLimiter(),
      auth: { trustProxy: false, turnstileVerifyUrl: '', criticalLimit: { max: 1000, windowSeconds: 60 } },
    },
  } as never;
}

type Who = { user: User; session: string };

async function makeUser(over: Record<string, unknown> = {}): Promise<Who> {
  const em = db.orm.em.fork();
  seq += 1;
  const user = em.create(User, {
    username: `rs${seq}`,
    displayName: '',
    affCode: `rsaff${seq}`,
    ...over,
  } as never);
  await em.flush();
  const session = createSessionToken();
  em.create(Session, {
    id: await sha256Hex(session),
    user: user.id,
    expiresAt: new Date(Date.now() + 3_600_000),
  } as never);
  await em.flush();
  return { user, session };
}

async function makeToken(owner: Who): Promise<number> {
  const em = db.orm.em.fork();
  const token = em.create(Token, {
    userId: owner.user.id,
    key: crypto.randomUUID().replaceAll('-', ''),
    name: 't',
    remainQuota: 1000,
  } as never);
  await em.flush();
  return token.id;
}

async function call(
  fn: (args: never) => unknown,
  who: Who,
  method: string,
  path: string,
  body?: unknown,
  params: Record<string, string> = {},
  withRelay: RelayClient | null = relay,
) {
  const headers = new Headers({
    'Accept-Language': 'en',
    Cookie: `sy_session=${who.session}`,
    'New-Api-User': String(who.user.id),
  });
  if (body !== undefined) headers.set('Content-Type', 'application/json');
  const request = new Request(`http://localhost${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const res = (await fn({ request, context: context(withRelay), params } as never)) as Response;
  return (await res.json()) as { success: boolean; message: string; data: unknown };
}

describe('relay invalidation after console changes', () => {
  it('admin user edits and manage actions invalidate that user', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const target = await makeUser({ quota: 100 });
    const edit = await call(userAction, admin, 'PUT', '/api/user/', {
      id: target.user.id,
      username: target.user.username,
      display_name: 'x',
      quota: 5000,
      group: 'vip',
    });
    expect(edit.success, edit.message).toBe(true);
    expect(calls).toEqual([{ userIds: [target.user.id], tokenIds: [] }]);

    for (const action of ['disable', 'enable', 'delete']) {
      calls = [];
      const res = await call(manageAction, admin, 'POST', '/api/user/manage', { id: target.user.id, action });
      expect(res.success, `${action}: ${res.message}`).toBe(true);
      expect(calls, action).toEqual([{ userIds: [target.user.id], tokenIds: [] }]);
    }
  });

  it('a refused change does not invalidate anything', async () => {
    const admin = await makeUser({ role: Role.Admin });
    const res = await call(manageAction, admin, 'POST', '/api/user/manage', {
      id: 999_999,
      action: 'disable',
    });
    expect(res.success).toBe(false);
    expect(calls).toEqual([]);
  });

  it('token update, status and delete invalidate that token', async () => {
    const owner = await makeUser();
    const id = await makeToken(owner);
    const update = await call(tokenAction, owner, 'PUT', '/api/token/', {
      id,
      name: 'renamed',
      remain_quota: 9000,
      unlimited_quota: false,
      expired_time: -1,
      model_limits_enabled: true,
      model_limits: 'gpt-4o',
      allow_ips: '',
      group: '',
    });
    expect(update.success, update.message).toBe(true);
    const status = await call(tokenAction, owner, 'PUT', '/api/token/?status_only=true', { id, status: 2 });
    expect(status.success, status.message).toBe(true);
    const del = await call(tokenByIdAction, owner, 'DELETE', `/api/token/${id}/`, undefined, {
      id: String(id),
    });
    expect(del.success, del.message).toBe(true);
    expect(calls).toEqual([
      { userIds: [], tokenIds: [id] },
      { userIds: [], tokenIds: [id] },
      { userIds: [], tokenIds: [id] },
    ]);
  });

  it('aff transfer and self deletion invalidate the user', async () => {
    const who = await makeUser({ affQuota: 2_000_000 });
    const transfer = await call(affTransferAction, who, 'POST', '/api/user/aff_transfer', {
      quota: 1_000_000,
    });
    expect(transfer.success, transfer.message).toBe(true);
    const del = await call(selfAction, who, 'DELETE', '/api/user/self', { confirm: who.user.username });
    expect(del.success, del.message).toBe(true);
    expect(calls).toEqual([
      { userIds: [who.user.id], tokenIds: [] },
      { userIds: [who.user.id], tokenIds: [] },
    ]);
  });

  it('a failing or absent relay never fails the change (logged, not thrown)', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      failWith = new RelayError('unavailable', 'relay at fake-relay:0 is unavailable: down');
      const owner = await makeUser();
      const id = await makeToken(owner);
      const res = await call(tokenAction, owner, 'PUT', '/api/token/?status_only=true', { id, status: 2 });
      expect(res.success, res.message).toBe(true);
      expect(calls).toHaveLength(1);
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('unavailable'));
      const row = await db.orm.em.fork().findOneOrFail(Token, { id });
      expect(row.status).toBe(2);

      calls = [];
      const none = await call(
        tokenAction,
        owner,
        'PUT',
        '/api/token/?status_only=true',
        { id, status: 1 },
        {},
        null,
      );
      expect(none.success, none.message).toBe(true);
      expect(calls).toEqual([]);
    } finally {
      warn.mockRestore();
    }
  });

  it('syncRelayAccounts skips empty changes and drops duplicates', async () => {
    await syncRelayAccounts({ relay }, {});
    await syncRelayAccounts({ relay }, { userIds: [0] });
    expect(calls).toEqual([]);
    await syncRelayAccounts({ relay }, { userIds: [3, 3, 4], tokenIds: [7, 7] });
    expect(calls).toEqual([{ userIds: [3, 4], tokenIds: [7] }]);
  });
});
