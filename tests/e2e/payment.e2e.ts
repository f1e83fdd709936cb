/**
 * Paying for a top-up by Alipay and by WeChat Pay through the gateway fakes (tests/fakes/alipay.ts,
 * tests/fakes/wechatpay.ts, started by global-setup and driven over their control URLs), with JavaScript on and off (issue 16; seed 001 §2.9, §4, §7 Wallet; seed 000
 * §2 admin orders page):
 * - with JavaScript the pay button opens a dialog with the QR code that polls every 3 s and shows the green
 *   check once the (replayed) notify is in; closing it refreshes the balance;
 * - without JavaScript the pay button leads to the order page with the QR code and a refresh link;
 * - either way the balance rises once although the fake sends the notify three times at once; the bill list
 *   shows the paid order; the admin finds it on /order by user id.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Order } from '@switchyard/db/entities/order.ts';
import { Role, User } from '@switchyard/db/entities/user.ts';
import { OptionService } from '@switchyard/db/options/service.ts';
import { createRedisPubSub, type PubSub } from '@switchyard/db/pubsub.ts';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createE2eUser, openProductOrm, signIn } from './fixtures.ts';
import { type Harness, launch, MODES, type Mode, ready } from './harness.ts';

let h: Harness;
let orm: MikroORM;
let pubsub: PubSub;
let options: OptionService;
const saved = new Map<string, string>();
const run = Date.now().toString(36).slice(-6);
const fake = inject('alipay');
const wechat = inject('wechatPay');

async function setOption(key: string, value: string): Promise<void> {
  if (!saved.has(key)) saved.set(key, options.getRaw(key as never));
  await options.set(key as never, value as never, 1);
}

async function control(action: 'scan' | 'pay', orderId: string, times = 1): Promise<{ answers?: string[] }> {
  const res = await fetch(`${fake.controlUrl}/${action}?out_trade_no=${orderId}&times=${times}`, {
    method: 'POST',
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { answers?: string[] };
}

/** The buyer pays `times` notifies at once; every notify must be acknowledged. */
async function buyerPays(method: 1 | 2, orderId: string, times: number): Promise<void> {
  if (method === 1) {
    await control('scan', orderId);
    expect((await control('pay', orderId, times)).answers).toEqual(Array(times).fill('success'));
    return;
  }
  const res = await fetch(`${wechat.controlUrl}/pay?out_trade_no=${orderId}&times=${times}`, {
    method: 'POST',
  });
  expect(res.status).toBe(200);
  expect(((await res.json()) as { statuses: number[] }).statuses).toEqual(Array(times).fill(204));
}

beforeAll(async () => {
  h = await launch();
  orm = await openProductOrm();
  pubsub = await createRedisPubSub(inject('redisURL'));
  options = new OptionService({ orm, pubsub });
  await options.load();
  await setOption('Price', '7.3');
  await setOption('MinTopUp', '1');
  await setOption('TopupConfig', '[10,20]');
  await setOption('AlipayAppId', fake.appId);
  await setOption('AlipayPrivateKey', fake.merchantPrivateKey);
  await setOption('AlipayPublicKey', fake.platformPublicKey);
  await setOption('AlipayNotifyUrl', `${h.baseURL}/api/payment/alipay/notify`);
  for (const [key, value] of Object.entries(wechat.options)) await setOption(key, value);
  await setOption('WeChatPayNotifyUrl', `${h.baseURL}/api/payment/wechatpay/notify`);
});
afterAll(async () => {
  for (const [key, raw] of saved) await options?.set(key as never, raw as never, 1);
  await options?.close();
  await pubsub?.close();
  await h?.close();
  await orm?.close(true);
});

const balance = (page: Page) => page.getByTestId('wallet-balance').textContent();
const quotaOf = async (id: number) => Number((await orm.em.fork().findOneOrFail(User, { id })).quota);

/** Tops up $10 by `method` (1 Alipay, 2 WeChat Pay) through the page in `mode`; answers the order id. */
async function topUp(page: Page, mode: Mode, method: 1 | 2): Promise<string> {
  const button = page.getByTestId(`pay-${method}`);
  if (mode === 'nojs') {
    await Promise.all([page.waitForURL(/\/topup\/order\/SY[0-9a-f]{30}$/), button.click()]);
    const orderId = page.url().split('/').pop()!;
    expect(await page.locator('[data-testid="order-qr"] svg').count()).toBe(1);
    expect(await page.getByTestId('order-money').textContent()).toBe('73.00');
    await buyerPays(method, orderId, 3);
    await page.getByTestId('order-refresh').click();
    await page.waitForSelector('[data-testid="order-paid"]');
    await page.goto('/topup');
    return orderId;
  }
  await button.click();
  const dialog = page.getByTestId('pay-dialog');
  await dialog.waitFor();
  expect(await dialog.locator('[data-testid="order-qr"] svg').count()).toBe(1);
  const orderId = (await dialog.locator('code').textContent()) ?? '';
  expect(orderId).toMatch(/^SY[0-9a-f]{30}$/);
  await buyerPays(method, orderId, 3);
  // the 3 s poll picks the payment up and shows the green check
  await dialog.getByTestId('order-paid').waitFor({ timeout: 10_000 });
  await dialog.getByRole('button', { name: '关闭' }).click();
  await dialog.waitFor({ state: 'detached' });
  return orderId;
}

async function walletAt(page: Page, mode: Mode): Promise<void> {
  // the options reach the product over pub/sub: wait until both pay buttons are offered
  await expect
    .poll(
      async () => {
        const res = await page.goto('/topup?amount=10').catch(() => null);
        if (!res) return 0;
        return (await page.getByTestId('pay-1').count()) + (await page.getByTestId('pay-2').count());
      },
      { timeout: 20_000, interval: 500 },
    )
    .toBe(2);
  await ready(page, mode);
  expect(await page.getByTestId('wallet-payable').textContent()).toContain('73.00');
}

describe.each(MODES)('WeChat Pay top-up with JavaScript %s', (mode: Mode) => {
  it('pays through the fake and credits the balance once', async () => {
    const who = await createE2eUser(orm, `wxp_${mode}${run}`, { quota: 500000 });
    const page = await h.page(mode);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await signIn(h, mode, who);
    await walletAt(page, mode);
    const orderId = await topUp(page, mode, 2);
    await expect.poll(() => balance(page)).toBe('$11.00');
    expect(await quotaOf(who.id)).toBe(5_500_000);
    const order = await orm.em.fork().findOneOrFail(Order, { orderId });
    expect([order.status, order.payMethod, Number(order.moneyCents)]).toEqual([1, 2, 7300]);
    expect(errors).toEqual([]);
  });
});

describe.each(MODES)('Alipay top-up with JavaScript %s', (mode: Mode) => {
  it('pays through the fake and credits the balance once', async () => {
    const who = await createE2eUser(orm, `pay_${mode}${run}`, { quota: 500000 });
    const page = await h.page(mode);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await signIn(h, mode, who);
    await walletAt(page, mode);
    expect(await balance(page)).toBe('$1.00');
    const orderId = await topUp(page, mode, 1);
    await expect.poll(() => balance(page)).toBe('$11.00');
    expect(await quotaOf(who.id)).toBe(5_500_000);
    const order = await orm.em.fork().findOneOrFail(Order, { orderId });
    expect([order.status, Number(order.moneyCents), order.userId]).toEqual([1, 7300, who.id]);

    // the bill list shows the paid order
    await page.goto('/topup?dialog=bills');
    await ready(page, mode);
    const bills = page.getByTestId('bills');
    await bills.waitFor();
    const row = bills.locator(`tr[data-order="${orderId}"]`);
    expect(await row.textContent()).toContain('已支付');
    expect(await row.textContent()).toContain('$10.00');

    // the admin finds it on /order by user id
    const admin = await createE2eUser(orm, `payadm_${mode}${run}`, { role: Role.Admin });
    await signIn(h, mode, admin);
    await page.goto(`/order?user_id=${who.id}`);
    await ready(page, mode);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('订单管理');
    const rows = page.locator('table.orders-table tbody tr');
    expect(await rows.count()).toBe(1);
    expect(await rows.first().getAttribute('data-order')).toBe(orderId);
    expect(errors).toEqual([]);
  });
});
