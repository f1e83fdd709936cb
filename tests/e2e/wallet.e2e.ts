/**
 * The wallet page /topup (seed 001 §2.9, §5 Top-up, §7 Wallet) with JavaScript on and off: a user sees the
 * balance, redeems a code in the redemption-code box and sees the balance rise; a wrong or used code is refused
 * next to the box; the buy-codes link comes from TopUpLink; online top-up reads "not enabled" while no pay
 * method is configured. Options change through an OptionService on the product's database + Redis pub/sub.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Redemption } from '@switchyard/db/entities/redemption.ts';
import { User } from '@switchyard/db/entities/user.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createRedisPubSub, type PubSub } from '@switchyard/db/pubsub.ts';
import type { Page } from 'playwright-core';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateRedemptionKey } from '#app/domain/redemptions/redemptions.server.ts';
import { createE2eUser, openProductOrm, signIn } from './fixtures.ts';
import { type Harness, launch, MODES, type Mode, ready, submit } from './harness.ts';

let h: Harness;
let orm: MikroORM;
let pubsub: PubSub;
let options: OptionService;
/** Options this file changes, with their values before, restored in afterAll. */
const saved = new Map<string, string>();

async function setOption(key: string, value: string): Promise<void> {
  if (!saved.has(key)) saved.set(key, options.getRaw(key as never));
  await options.set(key as never, value as never, 1);
}
const run = Date.now().toString(36).slice(-6);
const SHOP = 'https://shop.example.test/codes';

/** The redeem attempts of earlier runs share the per-IP 'redeem' bucket (127.0.0.1): start from a clean one. */
async function clearRedeemLimits(): Promise<void> {
  const client = createClient({ url: inject('redisURL') });
  await client.connect();
  try {
    for await (const keys of client.scanIterator({ MATCH: '*rl:critical:redeem*', COUNT: 200 })) {
      const list = Array.isArray(keys) ? keys : [keys];
      if (list.length > 0) await client.del(list);
    }
  } finally {
    await client.close();
  }
}

const PAY_OPTIONS = [
  'AlipayAppId',
  'AlipayPrivateKey',
  'AlipayPublicKey',
  'AlipayNotifyUrl',
  'TopupConfig',
  'MinTopUp',
  'Price',
];

/** Puts the pay options back (the redeem journey expects online top-up to be off). */
async function restorePayOptions(): Promise<void> {
  for (const key of PAY_OPTIONS) {
    const raw = saved.get(key);
    if (raw !== undefined) await options?.set(key as never, raw as never, 1);
    saved.delete(key);
  }
}

beforeAll(async () => {
  await clearRedeemLimits();
  h = await launch();
  orm = await openProductOrm();
  pubsub = await createRedisPubSub(inject('redisURL'));
  options = new OptionService({ orm, pubsub });
  await options.load();
  await setOption('TopUpLink', SHOP);
});
afterAll(async () => {
  await restorePayOptions();
  if (saved.has('TopUpLink')) await options?.set('TopUpLink', saved.get('TopUpLink') ?? '', 1);
  await options?.close();
  await pubsub?.close();
  await h?.close();
  await orm?.close(true);
  await clearRedeemLimits();
});

async function makeCode(quota: number): Promise<string> {
  const em = orm.em.fork();
  const key = generateRedemptionKey();
  em.create(Redemption, { key, quota, name: `wallet_${run}` } as never);
  await em.flush();
  return key;
}

const balance = (page: Page) => page.getByTestId('wallet-balance').textContent();
const codeBox = (page: Page) => page.getByRole('textbox', { name: '兑换码', exact: true });
const redeemButton = (page: Page) => page.getByRole('button', { name: '兑换余额', exact: true });
/** A refused redeem answers the page itself (HTTP 400, no redirect): wait for the POST's answer. */
async function refused(page: Page, mode: Mode): Promise<void> {
  await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    redeemButton(page).click(),
  ]);
  if (mode === 'nojs') await page.waitForLoadState('load');
}

const toasts = async (page: Page) => (await page.getByTestId('toast').allTextContents()).join(' | ');

describe.each(MODES)('wallet top-up with JavaScript %s', (mode: Mode) => {
  it('redeems a code in the box and shows the balance rise', async () => {
    const who = await createE2eUser(orm, `wal_${mode}${run}`, {
      quota: 500000,
      usedQuota: 250000,
      requestCount: 3,
    });
    const key = await makeCode(1_000_000);
    const page = await h.page(mode);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      // the refused redeems answer 400 on purpose; the browser logs those responses
      if (m.type() === 'error' && !m.text().includes('status of 400')) errors.push(m.text());
    });
    await signIn(h, mode, who);
    const res = await page.goto('/topup');
    expect(res?.status()).toBe(200);
    await ready(page, mode);
    expect(await page.title()).toBe('钱包');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('钱包');
    expect(await balance(page)).toBe('$1.00');
    expect(await page.getByTestId('wallet-used').textContent()).toBe('$0.50');
    expect(await page.getByTestId('wallet-requests').textContent()).toBe('3');
    // the buy link comes from TopUpLink, and with no pay method configured the online section says so instead
    // of offering payment (options reach the product over pub/sub, hence the poll)
    await expect
      .poll(async () => {
        await page.reload();
        return [
          await page.getByRole('link', { name: '购买兑换码' }).getAttribute('href'),
          (await page.getByTestId('wallet-online').textContent())?.includes('管理员未开启在线充值'),
        ];
      })
      .toEqual([SHOP, true]);
    await ready(page, mode);

    // an unknown code is refused next to the box; the typed code stays
    await codeBox(page).fill('0'.repeat(32));
    await refused(page, mode);
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('无效的兑换码');
    expect(await codeBox(page).inputValue()).toBe('0'.repeat(32));
    expect(await balance(page)).toBe('$1.00');

    await codeBox(page).fill(key);
    if (mode === 'js') {
      // hold the POST so the busy state can be seen: the button is disabled while redeeming
      let release = () => {};
      const held = new Promise<void>((r) => {
        release = r;
      });
      await page.route(
        (url) => url.pathname.startsWith('/topup'),
        async (route) => {
          if (route.request().method() === 'POST') await held;
          await route.continue();
        },
      );
      await redeemButton(page).click();
      const busy = page.getByRole('button', { name: '兑换中…' });
      await busy.waitFor();
      expect(await busy.isDisabled()).toBe(true);
      release();
      await expect.poll(() => balance(page)).toBe('$3.00');
      await page.unroute((url) => url.pathname.startsWith('/topup'));
    } else {
      await submit(page, mode, () => redeemButton(page).click());
      expect(page.url()).toBe(`${h.baseURL}/topup`);
      expect(await balance(page)).toBe('$3.00');
    }
    await expect.poll(() => toasts(page)).toContain('兑换成功！已充值 $2.00');
    expect(await codeBox(page).inputValue()).toBe('');
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(Number((await orm.em.fork().findOneOrFail(User, { id: who.id })).quota)).toBe(1_500_000);

    // the same code again: refused, the balance does not move
    await codeBox(page).fill(key);
    await refused(page, mode);
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('该兑换码已被使用');
    expect(await balance(page)).toBe('$3.00');
    expect(errors).toEqual([]);
  });

  it('offers preset and custom amounts with the payable amount once a pay method is configured', async () => {
    await setOption('AlipayAppId', 'e2e-app');
    await setOption('AlipayPrivateKey', 'e2e-private-key');
    await setOption('AlipayPublicKey', 'e2e-alipay-public-key');
    await setOption('AlipayNotifyUrl', 'https://pay.example.com/api/payment/alipay/notify');
    await setOption('TopupConfig', '[10,50]');
    await setOption('MinTopUp', '5');
    await setOption('Price', '7.3');
    const who = await createE2eUser(orm, `walo_${mode}${run}`);
    const page = await h.page(mode);
    await signIn(h, mode, who);
    await expect
      .poll(async () => {
        await page.goto('/topup');
        return page.getByRole('group', { name: '选择金额' }).count();
      })
      .toBe(1);
    await ready(page, mode);
    const online = page.getByTestId('wallet-online');
    // a GET form: a navigation without JavaScript, a loader fetch with it (the polls below wait for its result)
    const go = (act: () => Promise<void>) => (mode === 'nojs' ? submit(page, mode, act) : act());
    // a fully configured pay method: no 'unsupported' notice
    expect(await online.textContent()).not.toContain('此服务器暂不支持在线支付');
    await go(() => online.getByRole('button', { name: '$10', exact: true }).click());
    await expect.poll(() => page.getByTestId('wallet-payable').textContent()).toBe('实付金额：73.00');
    expect(new URL(page.url()).searchParams.get('amount')).toBe('10');
    await online.getByLabel('充值金额（美元）').fill('2');
    await go(() => online.getByRole('button', { name: '计算实付金额' }).click());
    await expect.poll(() => online.getByRole('alert').textContent()).toBe('充值金额不能低于 $5');
    await online.getByLabel('充值金额（美元）').fill('12.5');
    await go(() => online.getByRole('button', { name: '计算实付金额' }).click());
    await expect.poll(() => page.getByTestId('wallet-payable').textContent()).toBe('实付金额：91.25');
    // the configured method is offered for the computed amount
    await expect.poll(() => online.getByRole('button', { name: '支付宝支付' }).count()).toBe(1);
    await restorePayOptions();
  });
});
