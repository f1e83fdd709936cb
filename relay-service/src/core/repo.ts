/**
 * The relay's reads (and its few writes) in PostgreSQL. The console owns every table but the channel health
 * columns (ARCHITECTURE.md §3), so the relay only reads tokens, users, channels and abilities and writes
 * status/other_info/response_time/test_time/balance of channels. Plain SQL: these run on the hot path (cached
 * by accounts.ts and catalog.ts) and need no unit of work.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import {
  channelKeySlot,
  PLAINTEXT_BOX,
  type SecretBox,
  SecretsError,
  TOKEN_KEY_HASH,
} from '@switchyard/db/security/secrets.ts';

export type Sql = <T = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<T[]>;

export function sqlFor(orm: MikroORM): Sql {
  const conn = orm.em.getConnection();
  return async <T>(sql: string, params: unknown[] = []) => (await conn.execute(sql, params, 'all')) as T[];
}

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

/** A token as the relay needs it: never its key (found by it, or by its keyed hash when sealed; ADR 035). */
export type TokenRecord = {
  id: number;
  userId: number;
  name: string;
  status: number;
  remainQuota: number;
  unlimitedQuota: boolean;
  /** unix seconds; -1 never */
  expiredTime: number;
  modelLimitsEnabled: boolean;
  modelLimits: string[];
  allowIps: string;
  group: string;
};

export type UserRecord = {
  id: number;
  username: string;
  group: string;
  quota: number;
  role: number;
  status: number;
  setting: Record<string, unknown>;
};

export type ChannelRecord = {
  id: number;
  type: number;
  name: string;
  key: string;
  baseUrl: string;
  other: string;
  openaiOrganization: string | null;
  modelMapping: Record<string, string>;
  statusCodeMapping: Record<string, string>;
  setting: Record<string, unknown>;
  paramOverride: Record<string, unknown>;
  models: string[];
  groups: string[];
  autoBan: boolean;
  testModel: string;
  priority: number;
  weight: number;
  status: number;
  tag: string | null;
  otherInfo: Record<string, unknown>;
};

export type AbilityRecord = {
  group: string;
  model: string;
  channelId: number;
  priority: number;
  weight: number;
};

function jsonObject(text: unknown): Record<string, unknown> {
  if (typeof text !== 'string' || text.trim() === '') return {};
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

const csv = (text: unknown): string[] =>
  typeof text === 'string'
    ? text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : [];

const CHANNEL_SELECT = `select id, type, name, key, base_url, other, openai_organization, model_mapping,
    status_code_mapping, setting, models, "group", auto_ban, test_model, priority, weight, status, tag, other_info
  from channels`;

function toChannel(r: Record<string, unknown>): ChannelRecord {
  const setting = jsonObject(r.setting);
  const paramOverride = jsonObject(
    typeof setting.param_override === 'string'
      ? setting.param_override
      : JSON.stringify(setting.param_override ?? {}),
  );
  return {
    id: num(r.id),
    type: num(r.type),
    name: String(r.name),
    key: String(r.key),
    baseUrl: String(r.base_url ?? '').replace(/\/+$/, ''),
    other: String(r.other ?? ''),
    openaiOrganization: (r.openai_organization as string | null) || null,
    modelMapping: jsonObject(r.model_mapping) as Record<string, string>,
    statusCodeMapping: jsonObject(r.status_code_mapping) as Record<string, string>,
    setting,
    paramOverride,
    models: csv(r.models),
    groups: csv(r.group),
    autoBan: num(r.auto_ban) === 1,
    testModel: String(r.test_model ?? ''),
    priority: num(r.priority),
    weight: num(r.weight),
    status: num(r.status),
    tag: (r.tag as string | null) ?? null,
    otherInfo: jsonObject(r.other_info),
  };
}

function toToken(r: Record<string, unknown>): TokenRecord {
  return {
    id: num(r.id),
    userId: num(r.user_id),
    name: String(r.name),
    status: num(r.status),
    remainQuota: num(r.remain_quota),
    unlimitedQuota: Boolean(r.unlimited_quota),
    expiredTime: num(r.expired_time),
    modelLimitsEnabled: Boolean(r.model_limits_enabled),
    modelLimits: csv(r.model_limits),
    allowIps: String(r.allow_ips ?? ''),
    group: String(r.group ?? ''),
  };
}

const USER_SELECT = `select id, username, "group", quota, role, status, setting from users`;

/** `prefix`: the user columns' alias prefix when the row also holds a token (ACCOUNT_SELECT). */
function toUser(r: Record<string, unknown>, prefix = ''): UserRecord {
  return {
    id: num(r[`${prefix}id`]),
    username: String(r[`${prefix}username`]),
    group: String(r[`${prefix}group`] || 'default'),
    quota: num(r[`${prefix}quota`]),
    role: num(r[`${prefix}role`]),
    status: num(r[`${prefix}status`]),
    setting: jsonObject(r[`${prefix}setting`]),
  };
}

/** A token with its owner, as the account cache holds them. */
export type AccountRecord = { token: TokenRecord; user: UserRecord };

// One row per live token of a live owner: the account cache's read (a miss and the bulk refresh alike), so a
// miss costs one round trip and a refresh one query per chunk instead of a tokens and a users query each.
const ACCOUNT_SELECT = `select t.id, t.user_id, t.name, t.status, t.remain_quota, t.unlimited_quota,
                t.expired_time, t.model_limits_enabled, t.model_limits, t.allow_ips, t."group",
                u.id as u_id, u.username as u_username, u."group" as u_group, u.quota as u_quota, u.role as u_role,
                u.status as u_status, u.setting as u_setting
           from tokens t join users u on u.id = t.user_id and u.deleted_at is null`;

function toAccount(r: Record<string, unknown>): AccountRecord {
  return { token: toToken(r), user: toUser(r, 'u_') };
}

/** other_info.status_reason of a channel the relay disabled because its stored key does not open (ADR 035). */
export const KEY_UNREADABLE_REASON = 'key cannot be decrypted';

/**
 * `secrets` opens sealed channel keys (SECRETS_KEY, ADR 019). Opening happens here only, when channels are loaded
 * (the catalog's reload, a channel operation), never per request; an unchanged row reuses the key opened at the
 * previous load, so a periodic reload decrypts only rows that changed. It also hashes a presented token key on an
 * account cache miss (one HMAC per configured key: one, or two during a rotation), since a sealed token is found
 * by its keyed hash. `log` hears about channels disabled for a key that does not open.
 */
export function createRepo(
  sql: Sql,
  secrets: SecretBox = PLAINTEXT_BOX,
  opts: { log?: (message: string) => void } = {},
) {
  /** `${id}:${stored}` -> opened key, as of the last full load (bounded by the channel table). */
  let opened = new Map<string, string>();
  const openKey = async (row: Record<string, unknown>, next: Map<string, string>): Promise<ChannelRecord> => {
    const channel = toChannel(row);
    const cacheKey = `${channel.id}:${channel.key}`;
    let key = opened.get(cacheKey);
    if (key === undefined) key = await secrets.open(channel.key, channelKeySlot(channel.id));
    next.set(cacheKey, key);
    channel.key = key;
    return channel;
  };
  /**
   * A channel whose stored key does not open (altered, or moved from another row) is not routed: auto-disabled
   * (status 3) with the reason in other_info when it was enabled, logged, and loaded without a key, so every
   * other channel keeps serving (ADR 035). A key that is not configured at all stops the process at start
   * instead (assertSecretsReadable).
   */
  const unreadable = async (row: Record<string, unknown>, err: SecretsError): Promise<ChannelRecord> => {
    const channel = toChannel(row);
    channel.key = '';
    if (channel.status === 1) {
      channel.otherInfo = {
        ...channel.otherInfo,
        status_reason: `${KEY_UNREADABLE_REASON}: ${err.message}`.slice(0, 500),
        status_time: Math.floor(Date.now() / 1000),
      };
      channel.status = 3;
      await sql(`update channels set status = 3, other_info = ? where id = ? and status = 1`, [
        JSON.stringify(channel.otherInfo),
        channel.id,
      ]);
      await sql(`update abilities set enabled = false where channel_id = ?`, [channel.id]);
      opts.log?.(
        `channel #${channel.id} ${channel.name} auto-disabled: ${KEY_UNREADABLE_REASON} (${err.message})`,
      );
    }
    return channel;
  };

  return {
    /**
     * The live token with this key and its live owner (an account cache miss): a sealed row by the key's lookup
     * hash under each configured key, a plaintext row (no SECRETS_KEY, or written before it) by the key itself.
     * Both are unique index probes; a stored ciphertext presented as a key matches nothing.
     */
    async accountByKey(key: string): Promise<AccountRecord | null> {
      const hashes = secrets.lookupHashes(key, TOKEN_KEY_HASH);
      const byHash = hashes.length ? `t.key_hash in (${hashes.map(() => '?').join(', ')}) or ` : '';
      const rows = await sql(
        `${ACCOUNT_SELECT} where (${byHash}(t.key_hash is null and t.key = ?)) and t.deleted_at is null`,
        [...hashes, key],
      );
      return rows[0] ? toAccount(rows[0]) : null;
    },

    /** Live accounts among token `ids` (the account cache's bulk refresh); the list travels as one JSON parameter. */
    async accountsByIds(ids: readonly number[]): Promise<AccountRecord[]> {
      if (ids.length === 0) return [];
      const rows = await sql(
        `${ACCOUNT_SELECT} where t.id in (select json_array_elements_text(?::json)::int) and t.deleted_at is null`,
        [JSON.stringify(ids)],
      );
      return rows.map(toAccount);
    },

    async tokenRemainQuota(id: number): Promise<number | null> {
      const rows = await sql(`select remain_quota from tokens where id = ? and deleted_at is null`, [id]);
      return rows[0] ? num(rows[0].remain_quota) : null;
    },

    /** used_quota of a token, or of a user when tokenId is null. */
    async usedQuota(userId: number, tokenId: number | null): Promise<number> {
      const rows =
        tokenId === null
          ? await sql(`select used_quota from users where id = ?`, [userId])
          : await sql(`select used_quota from tokens where id = ?`, [tokenId]);
      return rows[0] ? num(rows[0].used_quota) : 0;
    },

    async userById(id: number): Promise<UserRecord | null> {
      const rows = await sql(`${USER_SELECT} where id = ? and deleted_at is null`, [id]);
      return rows[0] ? toUser(rows[0]) : null;
    },

    async userQuota(id: number): Promise<number | null> {
      const rows = await sql(`select quota from users where id = ? and deleted_at is null`, [id]);
      return rows[0] ? num(rows[0].quota) : null;
    },

    /** Every channel with its key opened; one whose key does not open is disabled (`unreadable`). */
    async channels(): Promise<ChannelRecord[]> {
      const next = new Map<string, string>();
      const rows = await sql(`${CHANNEL_SELECT} order by id`);
      const channels = await Promise.all(
        rows.map((row) =>
          openKey(row, next).catch((err) => {
            if (!(err instanceof SecretsError)) throw err;
            return unreadable(row, err);
          }),
        ),
      );
      opened = next;
      return channels;
    },

    /**
     * One channel (channel tests, balances, model lists) without loading the whole table. Throws SecretsError when
     * its key does not open (that operation fails; the catalog has it disabled).
     */
    async channelById(id: number): Promise<ChannelRecord | null> {
      const [row] = await sql(`${CHANNEL_SELECT} where id = ?`, [id]);
      return row ? openKey(row, new Map()) : null;
    },

    async enabledAbilities(): Promise<AbilityRecord[]> {
      const rows = await sql(
        `select "group", model, channel_id, priority, weight from abilities where enabled = true`,
      );
      return rows.map((r) => ({
        group: String(r.group),
        model: String(r.model),
        channelId: num(r.channel_id),
        priority: num(r.priority),
        weight: num(r.weight),
      }));
    },

    /**
     * Channel health (the only channel columns the relay writes). Abilities follow the status. Only from the
     * status `from`: an administrator's manual disable (2) made after this relay loaded the channel must win.
     * False when the channel was not in `from` any more.
     */
    async setChannelStatus(
      id: number,
      status: number,
      otherInfo: Record<string, unknown>,
      from: number,
    ): Promise<boolean> {
      const changed = await sql(
        `update channels set status = ?, other_info = ? where id = ? and status = ? returning id`,
        [status, JSON.stringify(otherInfo), id, from],
      );
      if (changed.length === 0) return false;
      await sql(`update abilities set enabled = ? where channel_id = ?`, [status === 1, id]);
      return true;
    },

    async recordChannelTest(id: number, responseTimeMs: number, testTime: number): Promise<void> {
      await sql(`update channels set response_time = ?, test_time = ? where id = ?`, [
        Math.round(responseTimeMs),
        testTime,
        id,
      ]);
    },

    async recordChannelBalance(id: number, balance: number, updatedAt: number): Promise<void> {
      await sql(`update channels set balance = ?, balance_updated_time = ? where id = ?`, [
        balance,
        updatedAt,
        id,
      ]);
    },
  };
}

export type Repo = ReturnType<typeof createRepo>;
