import { isIP } from 'node:net';
import { AuditEntry } from '@switchyard/db/entities/audit-entry.ts';
import { TOKEN_NEVER_EXPIRES, Token, TokenStatus } from '@switchyard/db/entities/token.ts';
import { SecretsError, TOKEN_KEY_HASH, tokenKeySlot } from '@switchyard/db/security/secrets.ts';
import { z } from 'zod';
import type { RequestCtx } from '#app/domain/context.server.ts';
import { InputError, NotFoundError, UnauthorizedError } from '#app/domain/errors.ts';
import { INT4, INT8, intInput } from '#app/domain/input.ts';
import { type RelaySync, syncRelayAccounts } from '#app/domain/relay-sync.server.ts';
import { parseInput as parseWith } from '#app/domain/validation.ts';
import { DEFAULT_TOKEN_QUOTA, KEY_LENGTH, MAX_BATCH, MAX_MODEL_LIMITS, MAX_NAME } from './constants.ts';

/**
 * Token management (seed 001 §2.5, §3 Token, §4, §5 Token form, §7 Token, §9). Every function is scoped to the
 * acting user: a user sees and touches only their own tokens, and the id of anyone else's token is NotFound.
 * The JSON routes (/api/token*) and the /token pages call the same functions with the same schemas.
 */
export type TokensCtx = Pick<RequestCtx, 'em' | 'actor' | 't' | 'secrets'> &
  RelaySync & {
    options: Pick<RequestCtx['options'], 'get'>;
    /** client address recorded in audit entries */
    ip?: string;
  };

// ---------------------------------------------------------------------------------------------------------------
// Schemas. Messages are i18n keys of the `tokens` namespace.

/** An integer (JSON number or decimal text) a `bigint` column can hold; fractions are refused (input.ts). */
const intLike = intInput(INT8);
/** A row id (`int4` primary keys). */
const rowId = intInput(INT4).pipe(z.number().int().positive());
const bool = z
  .union([z.boolean(), z.string(), z.number()])
  .nullish()
  .transform((v) => v === true || v === 1 || v === 'true' || v === 'on' || v === '1');
const text = z
  .string()
  .nullish()
  .transform((v) => (typeof v === 'string' ? v.trim() : ''));

export const pageQuerySchema = z.object({
  p: z.coerce.number().int().min(0).catch(1),
  size: z.coerce.number().int().min(1).max(100).catch(10),
});

export const searchQuerySchema = pageQuerySchema.extend({ keyword: text, token: text });

/** expired_time: -1 (never), unix seconds, or a date text (the page's datetime field). */
const expiry = z
  .union([z.number(), z.string()])
  .nullish()
  .transform((v, issue) => {
    if (v == null || v === '') return TOKEN_NEVER_EXPIRES;
    if (typeof v === 'number' || /^-?\d+$/.test(v.trim())) {
      const n = Number(v);
      if (n === TOKEN_NEVER_EXPIRES || (Number.isSafeInteger(n) && n > 0)) return n;
    } else {
      const ms = Date.parse(v.trim());
      if (Number.isFinite(ms)) return Math.floor(ms / 1000);
    }
    issue.addIssue({ code: 'custom', message: 'errors.expiryFormat' });
    return z.NEVER;
  });

const fields = {
  name: text,
  remain_quota: z
    .union([intLike, z.literal('')])
    .nullish()
    .transform((v) => (typeof v === 'number' ? v : DEFAULT_TOKEN_QUOTA))
    .pipe(z.number().int('errors.quotaInteger').min(0, 'errors.quotaInteger')),
  unlimited_quota: bool,
  expired_time: expiry,
  model_limits_enabled: bool,
  model_limits: text,
  allow_ips: z
    .string()
    .nullish()
    .transform((v) => v ?? ''),
  group: text,
};

export const createTokenSchema = z.object({
  ...fields,
  count: z
    .union([intLike, z.literal('')])
    .nullish()
    .transform((v) => (typeof v === 'number' ? v : 1))
    .pipe(z.number().int().min(1, 'errors.countInvalid')),
});
export type CreateTokenInput = z.output<typeof createTokenSchema>;

const id = rowId;
const status = intLike.pipe(z.union([z.literal(TokenStatus.Enabled), z.literal(TokenStatus.Disabled)]));

/** `status` in a full update: new-api clients echo the whole token; only a change to 1 or 2 acts. */
export const updateTokenSchema = z.object({
  id,
  ...fields,
  status: intLike
    .nullish()
    .transform((v) => (v === TokenStatus.Enabled || v === TokenStatus.Disabled ? v : undefined)),
});
export type UpdateTokenInput = z.output<typeof updateTokenSchema>;

export const statusOnlySchema = z.object({ id, status });
export type StatusOnlyInput = z.output<typeof statusOnlySchema>;

/** Parses with a schema; a failure becomes an InputError whose message is the first translated issue. */
export function parseInput<S extends z.ZodType>(
  ctx: Pick<TokensCtx, 't'>,
  schema: S,
  value: unknown,
): z.output<S> {
  return parseWith(ctx.t, schema, value, { ns: 'tokens', messages: 'translated' });
}

// ---------------------------------------------------------------------------------------------------------------
// Wire format (new-api field names; `key` without the sk- prefix, only ever sent to its owner)

export type TokenWire = {
  id: number;
  user_id: number;
  key: string;
  name: string;
  status: number;
  created_time: number;
  accessed_time: number;
  expired_time: number;
  remain_quota: number;
  used_quota: number;
  unlimited_quota: boolean;
  model_limits_enabled: boolean;
  model_limits: string;
  allow_ips: string;
  group: string;
};

/** `key`: the opened key (tokenKey); the stored column may be sealed. */
export function serializeToken(token: Token, key: string): TokenWire {
  return {
    id: token.id,
    user_id: token.userId,
    key,
    name: token.name,
    status: token.status,
    created_time: Number(token.createdTime),
    accessed_time: Number(token.accessedTime),
    expired_time: Number(token.expiredTime),
    remain_quota: Number(token.remainQuota),
    used_quota: Number(token.usedQuota),
    unlimited_quota: token.unlimitedQuota,
    model_limits_enabled: token.modelLimitsEnabled,
    model_limits: token.modelLimits,
    allow_ips: token.allowIps,
    group: token.group,
  };
}

export type TokenPage = { items: TokenWire[]; page: number; total: number; page_size: number };

/** Audit view of a token: never the key. */
function auditView(token: Token) {
  const { key: _key, ...rest } = serializeToken(token, '');
  return rest;
}

/**
 * The one place the console reads a token's key (ADR 035): the stored value opened for its row (a plaintext row
 * passes through). One that does not open (an altered row, a ciphertext moved from another row) is logged and
 * shown as '' (its owner deletes it and creates another); it cannot authenticate either, since its lookup hash
 * belongs to the key it was created with.
 */
export async function tokenKey(
  ctx: Pick<TokensCtx, 'secrets'>,
  token: Pick<Token, 'id' | 'key'>,
): Promise<string> {
  try {
    return await ctx.secrets.open(token.key, tokenKeySlot(token.id));
  } catch (err) {
    if (!(err instanceof SecretsError)) throw err;
    console.error(`[console] ${err.message}`);
    return '';
  }
}

/** Tokens as their owner sees them, keys opened. */
async function serializeTokens(ctx: Pick<TokensCtx, 'secrets'>, tokens: Token[]): Promise<TokenWire[]> {
  return Promise.all(tokens.map(async (token) => serializeToken(token, await tokenKey(ctx, token))));
}

/**
 * The one place the console writes a token's key: sealed for its row (its id must be set) with its keyed lookup
 * hash, when SECRETS_KEY is set; plaintext with no hash without it (ADR 035).
 */
async function sealTokenKey(ctx: Pick<TokensCtx, 'secrets'>, token: Token, key: string): Promise<void> {
  token.key = await ctx.secrets.seal(key, tokenKeySlot(token.id));
  token.keyHash = ctx.secrets.enabled ? ctx.secrets.lookupHash(key, TOKEN_KEY_HASH) : null;
}

/** Ids for `n` new tokens from the table's sequence, so their keys can be sealed for their row before insert. */
async function allocateTokenIds(em: TokensCtx['em'], n: number): Promise<number[]> {
  const rows = await em.execute<{ id: number }[]>(
    `select nextval(pg_get_serial_sequence('tokens', 'id'))::int as id from generate_series(1, ?)`,
    [n],
  );
  return rows.map((r) => Number(r.id));
}

// ---------------------------------------------------------------------------------------------------------------
// Helpers

type Actor = NonNullable<TokensCtx['actor']>;

function requireActor(ctx: TokensCtx): Actor {
  if (!ctx.actor) throw new UnauthorizedError(ctx.t('tokens:errors.unauthorized'));
  return ctx.actor;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

const ALPHANUMERIC = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** `length` characters of [0-9a-zA-Z] from crypto.getRandomValues, without modulo bias. */
export function randomAlphanumeric(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (b < 248 && out.length < length) out += ALPHANUMERIC[b % 62];
    }
  }
  return out;
}

/** A new token key (new-api format: 48 alphanumerics, stored without the sk- prefix). */
export function generateKey(): string {
  return randomAlphanumeric(KEY_LENGTH);
}

/** The key as shown to its owner. */
export function displayKey(key: string): string {
  return `sk-${key}`;
}

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function clampPage(p: number): number {
  return Number.isFinite(p) && p >= 1 ? Math.floor(p) : 1;
}

function clampSize(n: number): number {
  return Number.isFinite(n) ? Math.min(100, Math.max(1, Math.floor(n))) : 10;
}

/** Validates each non-empty line of an allow-list as an IP address or CIDR range; answers the normalised text. */
export function normalizeAllowIps(ctx: Pick<TokensCtx, 't'>, value: string): string {
  const lines = value
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  for (const line of lines) {
    const [addr = '', prefix, extra] = line.split('/');
    const family = isIP(addr);
    const max = family === 6 ? 128 : 32;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= max);
    if (!family || !prefixOk || extra !== undefined)
      throw new InputError(ctx.t('tokens:errors.invalidIp', { ip: line }), { allow_ips: [] });
  }
  return lines.join('\n');
}

/** Groups the user may put on a token: the keys of UserUsableGroups plus the user's own group. */
export function usableGroups(ctx: Pick<TokensCtx, 'options' | 'actor'>): Record<string, string> {
  const configured = (ctx.options.get('UserUsableGroups') ?? {}) as Record<string, string>;
  const groups: Record<string, string> = { ...configured };
  const own = ctx.actor?.group;
  if (own && Object.keys(configured).length > 0 && !(own in groups)) groups[own] = own;
  return groups;
}

function validateGroup(ctx: TokensCtx, group: string): string {
  if (!group) return '';
  if (!(group in usableGroups(ctx)))
    throw new InputError(ctx.t('tokens:errors.groupNotUsable', { group }), { group: [] });
  return group;
}

function normalizeModelLimits(ctx: TokensCtx, value: string): string {
  const list = [
    ...new Set(
      value
        .split(',')
        .map((m) => m.trim())
        .filter(Boolean),
    ),
  ].join(',');
  if (list.length > MAX_MODEL_LIMITS)
    throw new InputError(ctx.t('tokens:errors.modelLimitsTooLong', { max: MAX_MODEL_LIMITS }), {
      model_limits: [],
    });
  return list;
}

function isExpired(expiredTime: number, now = nowSeconds()): boolean {
  return expiredTime !== TOKEN_NEVER_EXPIRES && expiredTime <= now;
}

function isExhausted(remainQuota: number, unlimited: boolean): boolean {
  return !unlimited && remainQuota <= 0;
}

/**
 * Marks the user's enabled tokens that are past expiry (3) or out of quota (4), so lists, the page and the
 * relay agree. Disabled tokens (2) keep their status.
 */
async function refreshStatuses(ctx: TokensCtx, userId: number): Promise<void> {
  const now = nowSeconds();
  await ctx.em.nativeUpdate(
    Token,
    {
      userId,
      deletedAt: null,
      status: TokenStatus.Enabled,
      expiredTime: { $ne: TOKEN_NEVER_EXPIRES, $lte: now },
    },
    { status: TokenStatus.Expired },
  );
  await ctx.em.nativeUpdate(
    Token,
    { userId, deletedAt: null, status: TokenStatus.Enabled, unlimitedQuota: false, remainQuota: { $lte: 0 } },
    { status: TokenStatus.Exhausted },
  );
}

/** The status a token should have after an edit: 3/4 when expired/exhausted, back to 1 once no longer so. */
function settledStatus(token: Token): number {
  if (token.status === TokenStatus.Disabled) return TokenStatus.Disabled;
  if (isExpired(Number(token.expiredTime))) return TokenStatus.Expired;
  if (isExhausted(Number(token.remainQuota), token.unlimitedQuota)) return TokenStatus.Exhausted;
  return TokenStatus.Enabled;
}

async function loadOwn(ctx: TokensCtx, actor: Actor, id: number): Promise<Token> {
  const token =
    Number.isSafeInteger(id) && id > 0
      ? await ctx.em.findOne(Token, { id, userId: actor.id, deletedAt: null })
      : null;
  if (!token) throw new NotFoundError(ctx.t('tokens:errors.notFound'));
  return token;
}

function audit(ctx: TokensCtx, actor: Actor, action: string, token: Token, before: unknown, after: unknown) {
  ctx.em.create(AuditEntry, {
    actorId: actor.id,
    action,
    targetType: 'token',
    targetId: String(token.id),
    before: before == null ? null : JSON.stringify(before),
    after: after == null ? null : JSON.stringify(after),
    ip: ctx.ip ?? '',
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Queries

/** GET /api/token/?p&size: the caller's tokens, newest first (p=0 is page 1, as the chat pages call it). */
export async function listTokens(ctx: TokensCtx, input: { page: number; size: number }): Promise<TokenPage> {
  const actor = requireActor(ctx);
  await refreshStatuses(ctx, actor.id);
  const page = clampPage(input.page);
  const size = clampSize(input.size);
  const [rows, total] = await ctx.em.findAndCount(
    Token,
    { userId: actor.id, deletedAt: null },
    { orderBy: { id: 'desc' }, limit: size, offset: (page - 1) * size },
  );
  return { items: await serializeTokens(ctx, rows), page, total, page_size: size };
}

/**
 * Ids of the user's sealed tokens whose key starts with `prefix`: a whole key is found by its lookup hash (one
 * index probe); a shorter prefix opens the user's sealed keys one by one (a search by hand, over one user's
 * tokens; plaintext rows are matched by the query itself).
 */
async function sealedKeyMatches(ctx: TokensCtx, userId: number, prefix: string): Promise<number[]> {
  if (!ctx.secrets.keyIds.length) return [];
  if (prefix.length >= KEY_LENGTH) {
    const hashes = ctx.secrets.lookupHashes(prefix, TOKEN_KEY_HASH);
    const rows = await ctx.em.find(
      Token,
      { userId, deletedAt: null, keyHash: { $in: hashes } },
      { fields: ['id'] },
    );
    return rows.map((r) => r.id);
  }
  const rows = await ctx.em.find(
    Token,
    { userId, deletedAt: null, keyHash: { $ne: null } },
    { fields: ['id', 'key'] },
  );
  const ids: number[] = [];
  for (const row of rows) if ((await tokenKey(ctx, row)).startsWith(prefix)) ids.push(row.id);
  return ids;
}

/**
 * GET /api/token/search?keyword&token&p&size: `keyword` matches inside the name; `token` matches the key exactly
 * or by prefix, with or without the sk- prefix (sealed keys too: sealedKeyMatches).
 */
export async function searchTokens(
  ctx: TokensCtx,
  input: { keyword: string; token: string; page: number; size: number },
): Promise<TokenPage> {
  const actor = requireActor(ctx);
  await refreshStatuses(ctx, actor.id);
  const page = clampPage(input.page);
  const size = clampSize(input.size);
  const where: Record<string, unknown> = { userId: actor.id, deletedAt: null };
  const keyword = input.keyword.trim();
  const key = input.token.trim().replace(/^sk-/, '');
  if (keyword) where.name = { $ilike: `%${escapeLike(keyword)}%` };
  if (key)
    where.$or = [
      { keyHash: null, key: { $like: `${escapeLike(key)}%` } },
      { id: { $in: await sealedKeyMatches(ctx, actor.id, key) } },
    ];
  const [rows, total] = await ctx.em.findAndCount(Token, where, {
    orderBy: { id: 'desc' },
    limit: size,
    offset: (page - 1) * size,
  });
  return { items: await serializeTokens(ctx, rows), page, total, page_size: size };
}

/** GET /api/token/{id}: one of the caller's tokens (another user's id is NotFound). */
export async function getToken(ctx: TokensCtx, id: number): Promise<TokenWire> {
  const actor = requireActor(ctx);
  await refreshStatuses(ctx, actor.id);
  const token = await loadOwn(ctx, actor, id);
  return serializeToken(token, await tokenKey(ctx, token));
}

// ---------------------------------------------------------------------------------------------------------------
// Mutations

type Fields = Omit<CreateTokenInput, 'count'>;

function checkFields(ctx: TokensCtx, input: Fields) {
  const name = input.name.trim();
  if (!name) throw new InputError(ctx.t('tokens:errors.nameRequired'), { name: [] });
  if (name.length > MAX_NAME)
    throw new InputError(ctx.t('tokens:errors.nameTooLong', { max: MAX_NAME }), { name: [] });
  if (!Number.isSafeInteger(input.remain_quota) || input.remain_quota < 0)
    throw new InputError(ctx.t('tokens:errors.quotaInteger'), { remain_quota: [] });
  return {
    name,
    remainQuota: input.remain_quota,
    unlimitedQuota: input.unlimited_quota,
    expiredTime: input.expired_time,
    modelLimitsEnabled: input.model_limits_enabled,
    modelLimits: normalizeModelLimits(ctx, input.model_limits),
    allowIps: normalizeAllowIps(ctx, input.allow_ips),
    group: validateGroup(ctx, input.group),
  };
}

/**
 * POST /api/token/: creates one token, or `count` (1..100) tokens: the first named NAME, the others
 * NAME-xxxxxx (6 random alphanumerics). Answers the created tokens with their keys (the owner's only chance
 * to be shown them in one reply; they stay visible to the owner afterwards).
 */
export async function createTokens(ctx: TokensCtx, input: CreateTokenInput): Promise<TokenWire[]> {
  const actor = requireActor(ctx);
  const values = checkFields(ctx, input);
  const count = input.count;
  if (!Number.isSafeInteger(count) || count < 1)
    throw new InputError(ctx.t('tokens:errors.countInvalid'), { count: [] });
  if (count > MAX_BATCH) throw new InputError(ctx.t('tokens:errors.countTooLarge', { max: MAX_BATCH }));
  return ctx.em.transactional(async (em) => {
    const scoped = { ...ctx, em };
    const created: { token: Token; key: string }[] = [];
    const ids = await allocateTokenIds(em, count);
    for (let i = 0; i < count; i++) {
      const key = generateKey();
      const token = em.create(Token, {
        ...values,
        id: ids[i] as number,
        name: i === 0 ? values.name : `${values.name}-${randomAlphanumeric(6)}`,
        userId: actor.id,
        key,
        keyHash: null,
        status: TokenStatus.Enabled,
        usedQuota: 0,
        createdTime: nowSeconds(),
        accessedTime: 0,
        deletedAt: null,
      });
      await sealTokenKey(ctx, token, key);
      token.status = settledStatus(token);
      created.push({ token, key });
    }
    await em.flush();
    for (const { token } of created) audit(scoped, actor, 'token.create', token, null, auditView(token));
    await em.flush();
    return created.map(({ token, key }) => serializeToken(token, key));
  });
}

function refuseEnable(ctx: TokensCtx, expiredTime: number, remainQuota: number, unlimited: boolean) {
  if (isExpired(expiredTime)) throw new InputError(ctx.t('tokens:errors.enableExpired'));
  if (isExhausted(remainQuota, unlimited)) throw new InputError(ctx.t('tokens:errors.enableExhausted'));
}

/**
 * PUT /api/token/: edits one of the caller's tokens (all fields). A `status` of 1 or 2 that differs from the
 * stored one also enables or disables (an echoed status is ignored); enabling is refused while the (new) expiry
 * has passed or the (new) quota is used up. A token whose edit fixes its expiry or quota goes back from 3/4 to
 * enabled; one whose edit expires or empties it becomes 3/4.
 */
export async function updateToken(ctx: TokensCtx, input: UpdateTokenInput): Promise<TokenWire> {
  const actor = requireActor(ctx);
  const values = checkFields(ctx, input);
  const updated = await ctx.em.transactional(async (em) => {
    const scoped = { ...ctx, em };
    const token = await loadOwn(scoped, actor, input.id);
    const before = auditView(token);
    // An echoed status is no change; only a switch to 1 (enable, checked) or 2 (disable) acts.
    const change = input.status !== undefined && input.status !== token.status ? input.status : undefined;
    if (change === TokenStatus.Enabled)
      refuseEnable(ctx, values.expiredTime, values.remainQuota, values.unlimitedQuota);
    em.assign(token, values);
    if (change !== undefined) token.status = change;
    token.status = settledStatus(token);
    audit(scoped, actor, 'token.update', token, before, auditView(token));
    await em.flush();
    return serializeToken(token, await tokenKey(ctx, token));
  });
  // Quota, status, group, model limits and allowed IPs are cached by the relay with the key.
  await syncRelayAccounts(ctx, { tokenIds: [updated.id] });
  return updated;
}

/**
 * PUT /api/token/?status_only=true {id, status}: enable (1) or disable (2) only. Enabling an expired or
 * exhausted token is refused with new-api's messages.
 */
export async function setTokenStatus(ctx: TokensCtx, input: StatusOnlyInput): Promise<TokenWire> {
  const actor = requireActor(ctx);
  const updated = await ctx.em.transactional(async (em) => {
    const scoped = { ...ctx, em };
    const token = await loadOwn(scoped, actor, input.id);
    const before = { status: token.status };
    if (input.status === TokenStatus.Enabled)
      refuseEnable(ctx, Number(token.expiredTime), Number(token.remainQuota), token.unlimitedQuota);
    token.status = input.status;
    audit(scoped, actor, 'token.status', token, before, { status: token.status });
    await em.flush();
    return serializeToken(token, await tokenKey(ctx, token));
  });
  await syncRelayAccounts(ctx, { tokenIds: [updated.id] });
  return updated;
}

/** DELETE /api/token/{id}/: removes one of the caller's tokens (soft delete; the key stops working). */
export async function deleteToken(ctx: TokensCtx, id: number): Promise<void> {
  const actor = requireActor(ctx);
  await ctx.em.transactional(async (em) => {
    const scoped = { ...ctx, em };
    const token = await loadOwn(scoped, actor, id);
    const before = auditView(token);
    token.deletedAt = new Date();
    token.status = TokenStatus.Disabled;
    audit(scoped, actor, 'token.delete', token, before, null);
    await em.flush();
  });
  await syncRelayAccounts(ctx, { tokenIds: [id] });
}
