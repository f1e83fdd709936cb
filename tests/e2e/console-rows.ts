/**
 * A few rows behind every console list (a token and logs of each kind per account, a channel, a redemption
 * code, a client version), so page-wide checks (crawl, axe) see the lists' links, tags and badges too.
 */
import { randomBytes } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { Channel } from '@switchyard/db/entities/channel.ts';
import { Log, LogType } from '@switchyard/db/entities/log.ts';
import { Redemption } from '@switchyard/db/entities/redemption.ts';
import { Token } from '@switchyard/db/entities/token.ts';
import type { E2eUser } from './fixtures.ts';

export async function seedConsoleRows(
  orm: MikroORM,
  user: E2eUser,
  root: E2eUser,
  upstreamURL: string,
): Promise<{ rootTokenId: number; channelId: number; redemptionId: number }> {
  const em = orm.em.fork();
  const tag = randomBytes(4).toString('hex');
  const now = Math.floor(Date.now() / 1000);
  const tokens: Token[] = [];
  const channels: Channel[] = [];
  const codes: Redemption[] = [];
  for (const owner of [user, root]) {
    for (const [i, status] of [1, 2, 3, 4].entries()) {
      const token = em.create(Token, {
        userId: owner.id,
        key: `rows${tag}${owner.id}${i}`.padEnd(48, 'x'),
        name: `rows-${owner.username}-${i}`,
        status,
        createdTime: now,
        remainQuota: 100_000,
      } as never);
      if (owner === root) tokens.push(token);
    }
    for (const [i, type] of [LogType.TopUp, LogType.Consume, LogType.Manage, LogType.System].entries()) {
      em.create(Log, {
        userId: owner.id,
        username: owner.username,
        type,
        createdAt: now - 60 - i,
        tokenName: `rows-${owner.username}-0`,
        modelName: type === LogType.Consume ? 'gpt-4o-mini' : '',
        quota: type === LogType.Consume ? 1500 : 0,
        promptTokens: 10,
        completionTokens: 5,
        useTime: [1, 150, 400][i % 3],
        isStream: true,
        channelId: 1,
        group: 'default',
        content: type === LogType.Consume ? 'model ratio 0.075, completion ratio 4, group ratio 1' : 'rows',
        other: JSON.stringify({
          model_ratio: 0.075,
          completion_ratio: 4,
          group_ratio: 1,
          model_price: -1,
          frt: 1200,
          is_model_mapped: true,
          upstream_model_name: 'gpt-4o-mini-2024-07-18',
        }),
      } as never);
    }
  }
  for (const status of [1, 2, 3]) {
    const channel = em.create(Channel, {
      name: `rows-${tag}-${status}`,
      type: 1,
      key: 'sk-rows',
      baseUrl: upstreamURL,
      models: 'gpt-4o-mini',
      group: 'default',
      status,
    } as never);
    channels.push(channel);
  }
  for (const status of [1, 2, 3]) {
    const code = em.create(Redemption, {
      userId: root.id,
      key: `rows${tag}${status}`.padEnd(32, 'x'),
      name: `rows-${tag}`,
      status,
      quota: 1000,
      createdTime: now,
    } as never);
    codes.push(code);
  }
  await em.flush();
  return { rootTokenId: tokens[0]!.id, channelId: channels[0]!.id, redemptionId: codes[0]!.id };
}
