/**
 * Lua sources of the Redis store. Every RelayStore operation that touches more than one key is one script, so
 * a check and the write that depends on it happen in one atomic step and one round trip: two relays can never
 * both pass a rate limit or a balance check that only one of them fits in.
 *
 * Keys are built inside the scripts from the prefix in ARGV[1] (a release only learns its accounts from the
 * hold it reads). That is fine on a single Redis; on Redis Cluster the prefix must contain a hash tag
 * (e.g. `{switchyard}:`) so that every key lives in one slot.
 *
 * Numbers cross the boundary as decimal strings and are handed to INCRBY as they are, so quota never goes
 * through Lua's float formatting.
 */

/** Shared helpers, prepended to every script. */
const PRELUDE = `
local P = ARGV[1]

local function balKey(kind, id) return P .. 'bal:' .. kind .. ':' .. id end
local function pendKey(kind, id) return P .. 'pend:' .. kind .. ':' .. id end
local function genKey(kind, id) return P .. 'gen:' .. kind .. ':' .. id end
local function holdKey(requestId) return P .. 'hold:' .. requestId end
-- The request id of the partial (flexible) hold open on an account, if any.
local function flexKey(kind, id) return P .. 'flex:' .. kind .. ':' .. id end
local HOLDS = P .. 'holds'
local OUTBOX = P .. 'outbox'

-- INCRBY rejects '-0', so negate decimal strings with care.
local function neg(n) if n == '0' then return n end return '-' .. n end

-- A missing bal is recomputed from PostgreSQL and pend, which already carry this change: only adjust a loaded one.
local function addBal(kind, id, delta)
  local k = balKey(kind, id)
  if redis.call('EXISTS', k) == 1 then redis.call('INCRBY', k, delta) end
end

-- pend of an idle account is 0: drop the key instead of keeping zeros around.
local function addPend(kind, id, delta)
  local k = pendKey(kind, id)
  if redis.call('INCRBY', k, delta) == 0 then redis.call('DEL', k) end
end

-- Gives a hold back to its accounts. Returns 1 when there was one.
local function releaseHold(requestId)
  local k = holdKey(requestId)
  local h = redis.call('HMGET', k, 'user', 'token', 'amount', 'flex')
  local user, token, held = h[1], h[2], h[3]
  if not user then return 0 end
  if h[4] then
    -- A partial hold frees its accounts' markers (only its own: one that expired may have been retaken).
    local fu = flexKey('u', user)
    if redis.call('GET', fu) == requestId then redis.call('DEL', fu) end
    if token ~= '' then
      local ft = flexKey('t', token)
      if redis.call('GET', ft) == requestId then redis.call('DEL', ft) end
    end
  end
  addBal('u', user, held)
  addPend('u', user, neg(held))
  if token ~= '' then
    addBal('t', token, held)
    addPend('t', token, neg(held))
  end
  redis.call('DEL', k)
  redis.call('ZREM', HOLDS, requestId)
  return 1
end

-- Sliding log: entries scored at or before windowStart have left the window.
local function prune(logKey, windowStart)
  redis.call('ZREMRANGEBYSCORE', logKey, '-inf', windowStart)
end

-- 0 when the log has room; otherwise ms until enough entries leave that it has room again (>= 1).
local function waitFor(logKey, max, windowMs, now)
  local n = redis.call('ZCARD', logKey)
  if n < max then return 0 end
  local entry = redis.call('ZRANGE', logKey, n - max, n - max, 'WITHSCORES')
  return math.max(1, tonumber(entry[2]) + windowMs - now)
end

local function record(logKey, now, member, windowMs)
  redis.call('ZADD', logKey, now, member)
  redis.call('PEXPIRE', logKey, windowMs)
end
`;

/**
 * reserve. ARGV: prefix, requestId, userId, tokenId ('' = none), amount, holdExpiresAt, now,
 * limitKey ('' = none), windowStart, windowMs, maxTotal, maxSuccess, minAmount ('' = an exact hold).
 * Returns {'ok', held} | {'rate_limited', retryAfterMs} | {'insufficient_user_quota'|'insufficient_token_quota',
 * available} | {'balance_unknown', 'user'|'token'}.
 */
const RESERVE = `${PRELUDE}
local requestId, userId, tokenId = ARGV[2], ARGV[3], ARGV[4]
local amountArg, holdExpiresAt, now = ARGV[5], ARGV[6], tonumber(ARGV[7])
local amount = tonumber(amountArg)
local limitKey, windowStart, windowMs = ARGV[8], ARGV[9], tonumber(ARGV[10])
local maxTotal, maxSuccess = tonumber(ARGV[11]), tonumber(ARGV[12])
local minArg = ARGV[13]

-- A retried reserve of a request that already holds quota must not hold it twice.
local prior = redis.call('HGET', holdKey(requestId), 'amount')
if prior then return {'ok', prior} end

-- 1. Rate limit (both windows are checked before anything is written).
local totalLog
if limitKey ~= '' then
  totalLog = P .. 'rl:t:' .. limitKey
  local successLog = P .. 'rl:s:' .. limitKey
  prune(totalLog, windowStart)
  prune(successLog, windowStart)
  local wait = 0
  if maxTotal > 0 then wait = math.max(wait, waitFor(totalLog, maxTotal, windowMs, now)) end
  if maxSuccess > 0 then wait = math.max(wait, waitFor(successLog, maxSuccess, windowMs, now)) end
  if wait > 0 then return {'rate_limited', wait} end
end

-- 2. Both balances must be cached (user first) before either is judged.
local userBal = redis.call('GET', balKey('u', userId))
if not userBal then return {'balance_unknown', 'user'} end
local tokenBal = false
if tokenId ~= '' then
  tokenBal = redis.call('GET', balKey('t', tokenId))
  if not tokenBal then return {'balance_unknown', 'token'} end
end

-- 3. Spendable must cover the amount and be positive (an amount of 0 still needs quota left). A flexible
-- hold (minArg set) that does not fit takes what is spendable instead, when that covers minArg and no other
-- partial hold is open on either account; the accounts are marked until this hold is settled or released.
local ub = tonumber(userBal)
local tb = tokenBal and tonumber(tokenBal)
local held = amountArg
if ub <= 0 or ub < amount or (tb and (tb <= 0 or tb < amount)) then
  local need = amount
  if minArg ~= '' then need = tonumber(minArg) end
  if ub <= 0 or ub < need then return {'insufficient_user_quota', userBal} end
  if tb and (tb <= 0 or tb < need) then return {'insufficient_token_quota', tokenBal} end
  if redis.call('EXISTS', flexKey('u', userId)) == 1 then return {'insufficient_user_quota', userBal} end
  if tb and redis.call('EXISTS', flexKey('t', tokenId)) == 1 then return {'insufficient_token_quota', tokenBal} end
  if ub < amount then held = userBal end
  if tb and tb < tonumber(held) then held = tokenBal end
  local ttl = tonumber(holdExpiresAt) - now
  redis.call('SET', flexKey('u', userId), requestId, 'PX', ttl)
  if tb then redis.call('SET', flexKey('t', tokenId), requestId, 'PX', ttl) end
  redis.call('HSET', holdKey(requestId), 'flex', '1')
end

-- 4. Record the attempt and hold the amount.
if totalLog and maxTotal > 0 then record(totalLog, now, requestId, windowMs) end
redis.call('DECRBY', balKey('u', userId), held)
addPend('u', userId, held)
if tokenId ~= '' then
  redis.call('DECRBY', balKey('t', tokenId), held)
  addPend('t', tokenId, held)
end
redis.call('HSET', holdKey(requestId), 'user', userId, 'token', tokenId, 'amount', held)
redis.call('ZADD', HOLDS, holdExpiresAt, requestId)
return {'ok', held}
`;

/**
 * settle. ARGV: prefix, requestId, userId, tokenId ('' = none), amount, success ('1'|'0'), limitKey ('' = none),
 * windowStart, windowMs, maxSuccess, payload, now, settledTtlMs. Returns the outbox entry id.
 */
const SETTLE = `${PRELUDE}
local requestId, userId, tokenId, amount = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local success, limitKey, windowStart, windowMs = ARGV[6], ARGV[7], ARGV[8], ARGV[9]
local maxSuccess, payload, now, settledTtlMs = tonumber(ARGV[10]), ARGV[11], ARGV[12], ARGV[13]
local settledKey = P .. 'settled:' .. requestId

-- Idempotent: the marker outlives any plausible retry of the same request.
local prior = redis.call('GET', settledKey)
if prior then return prior end

-- Replacing the hold by the final amount is "give the hold back, then charge the amount"; when the sweeper
-- already gave it back, only the charge remains.
releaseHold(requestId)
addBal('u', userId, neg(amount))
addPend('u', userId, amount)
if tokenId ~= '' then
  addBal('t', tokenId, neg(amount))
  addPend('t', tokenId, amount)
end

if success == '1' and limitKey ~= '' and maxSuccess > 0 then
  local successLog = P .. 'rl:s:' .. limitKey
  prune(successLog, windowStart)
  record(successLog, now, requestId, windowMs)
end

-- Stream ids carry the time so that outboxPending can range by age. An explicit <now>-* fails when the
-- stream already issued a later id (clock skew between relays); then the entry takes the next sequence
-- number of that last millisecond, so ids keep growing and the entry is reported barely later.
local fields = {'requestId', requestId, 'userId', userId, 'tokenId', tokenId, 'amount', amount,
  'payload', payload, 'createdAt', now}
local id = redis.pcall('XADD', OUTBOX, now .. '-*', unpack(fields))
if type(id) == 'table' and id.err then
  local info = redis.call('XINFO', 'STREAM', OUTBOX)
  local lastMs
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then lastMs = string.match(info[i + 1], '^(%d+)-') end
  end
  id = redis.call('XADD', OUTBOX, lastMs .. '-*', unpack(fields))
end

redis.call('SET', settledKey, id, 'PX', settledTtlMs)
return id
`;

/** release. ARGV: prefix, requestId. Returns 1 when a hold was released. */
const RELEASE = `${PRELUDE}
return releaseHold(ARGV[2])
`;

/**
 * releaseExpiredHolds, one batch. ARGV: prefix, now, batchSize. Returns {released, scanned}; the caller runs
 * batches until scanned < batchSize so that no single script blocks Redis for long.
 */
const RELEASE_EXPIRED = `${PRELUDE}
local ids = redis.call('ZRANGEBYSCORE', HOLDS, '-inf', ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
local released = 0
for _, requestId in ipairs(ids) do
  released = released + releaseHold(requestId)
  -- An index entry without its hash must not come back in every batch.
  redis.call('ZREM', HOLDS, requestId)
end
return {released, #ids}
`;

/** loadBalance. ARGV: prefix, kind ('u'|'t'), id, generation, committedQuota, ttlMs. Returns 1 or 0. */
const LOAD_BALANCE = `${PRELUDE}
local kind, id, generation, committed, ttlMs = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local current = redis.call('GET', genKey(kind, id)) or '0'
if tonumber(current) ~= tonumber(generation) then return 0 end
local k = balKey(kind, id)
-- A bal that is present already reflects every hold; overwriting it could lose one.
if redis.call('EXISTS', k) == 1 then return 1 end
local pend = redis.call('GET', pendKey(kind, id)) or '0'
redis.call('SET', k, committed, 'PX', ttlMs)
redis.call('DECRBY', k, pend)
return 1
`;

/** invalidateBalance. ARGV: prefix, kind, id. */
const INVALIDATE_BALANCE = `${PRELUDE}
redis.call('DEL', balKey(ARGV[2], ARGV[3]))
redis.call('INCR', genKey(ARGV[2], ARGV[3]))
return 1
`;

/**
 * ackOutbox. ARGV: prefix, then per entry: id, userId, tokenId ('' = none), amount. XDEL's count tells which
 * ack removed the entry, so a duplicate ack (two Billing replies, a retry) cannot lower pend twice. pend and the
 * generation change once per account of the batch.
 * Returns how many entries were removed.
 */
const ACK_OUTBOX = `${PRELUDE}
local removed = 0
-- Released amounts per account, applied once per account (a batch is mostly a few accounts' calls).
local sums, accounts = {}, {}
local function owe(kind, id, amount)
  local k = kind .. id
  if not sums[k] then
    sums[k] = 0
    accounts[#accounts + 1] = {kind, id, k}
  end
  sums[k] = sums[k] + tonumber(amount)
end
for i = 2, #ARGV, 4 do
  local id, userId, tokenId, amount = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  if redis.call('XDEL', OUTBOX, id) == 1 then
    removed = removed + 1
    owe('u', userId, amount)
    if tokenId ~= '' then owe('t', tokenId, amount) end
  end
end
for _, a in ipairs(accounts) do
  addPend(a[1], a[2], string.format('%d', -sums[a[3]]))
  redis.call('INCR', genKey(a[1], a[2]))
end
return removed
`;

// ARGV: prefix, lease name, holder id, ttl ms. Takes a free lease or extends one this holder already has.
const ACQUIRE_LEASE = `
local key = ARGV[1] .. 'lease:' .. ARGV[2]
local current = redis.call('GET', key)
if current == false or current == ARGV[3] then
  redis.call('SET', key, ARGV[3], 'PX', tonumber(ARGV[4]))
  return 1
end
return 0
`;

// ARGV: prefix, lease name, holder id. Gives the lease up only when this holder has it.
const RELEASE_LEASE = `
local key = ARGV[1] .. 'lease:' .. ARGV[2]
if redis.call('GET', key) == ARGV[3] then redis.call('DEL', key) return 1 end
return 0
`;

export const LUA = {
  acquireLease: ACQUIRE_LEASE,
  releaseLease: RELEASE_LEASE,
  reserve: RESERVE,
  settle: SETTLE,
  release: RELEASE,
  releaseExpired: RELEASE_EXPIRED,
  loadBalance: LOAD_BALANCE,
  invalidateBalance: INVALIDATE_BALANCE,
  ackOutbox: ACK_OUTBOX,
} as const;

export type ScriptName = keyof typeof LUA;
