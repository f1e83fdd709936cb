/** Record builders for the relay's unit tests: a valid, enabled token and user, overridable field by field. */
import type { TokenRecord, UserRecord } from './repo.ts';

export const tokenRecord = (over: Partial<TokenRecord> = {}): TokenRecord => ({
  id: 1,
  userId: 1,
  name: 't',
  status: 1,
  remainQuota: 10,
  unlimitedQuota: false,
  expiredTime: -1,
  modelLimitsEnabled: false,
  modelLimits: [],
  allowIps: '',
  group: '',
  ...over,
});

export const userRecord = (over: Partial<UserRecord> = {}): UserRecord => ({
  id: 1,
  username: 'u',
  group: 'default',
  quota: 10,
  role: 1,
  status: 1,
  setting: {},
  ...over,
});
