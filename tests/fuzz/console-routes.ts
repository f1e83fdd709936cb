/**
 * Every console JSON route (app/routes/api.*.ts) with a plausible request of each of its methods: the fuzz
 * suite starts from these bases and breaks one or more fields, so that the broken field reaches the code behind
 * the first checks. `console-routes.test.ts` fails when a route file has no entry here, so a new route cannot be
 * left out of the fuzzing.
 */
export type Base = Record<string, unknown>;

export type RouteSpec = {
  /** methods the route answers (others are fuzzed too: they must answer 405, not 5xx) */
  methods: ('GET' | 'POST' | 'PUT' | 'DELETE')[];
  /** a plausible body (POST/PUT/DELETE) */
  body?: Base;
  /** plausible query parameters (list filters, page) */
  query?: Record<string, string>;
};

const channelFields: Base = {
  name: 'fuzz-channel',
  type: 1,
  key: 'sk-fuzz-key',
  base_url: 'http://127.0.0.1:1',
  models: 'gpt-4o,gpt-4o-mini',
  group: 'default',
  priority: 0,
  weight: 0,
  tag: 'fuzz',
  model_mapping: '',
  status_code_mapping: '',
  other: '',
  setting: '',
  test_model: 'gpt-4o',
  auto_ban: 1,
  status: 1,
  max_input_tokens: 0,
  openai_organization: '',
};

const logFilters = {
  p: '1',
  page_size: '10',
  type: '0',
  username: 'fuzz',
  token_name: 'fuzz',
  model_name: 'gpt-4o',
  start_timestamp: '0',
  end_timestamp: '4102444800',
  channel: '1',
  group: 'default',
};

const taskFilters = {
  p: '1',
  page_size: '10',
  channel_id: '1',
  task_id: 'fuzz-task',
  start_timestamp: '0',
  end_timestamp: '4102444800',
};

const mjFilters = {
  p: '1',
  page_size: '10',
  channel_id: '1',
  mj_id: 'fuzz',
  start_timestamp: '0',
  end_timestamp: '4102444800000',
};

export const ROUTES: Record<string, RouteSpec> = {
  // Every /api path without a route: a 404 envelope whatever the method.
  'api.$.ts': { methods: ['GET', 'POST', 'PUT', 'DELETE'] },
  'api.channel.$id.ts': { methods: ['GET', 'DELETE'] },
  'api.channel._index.ts': {
    methods: ['GET', 'POST', 'PUT'],
    query: { p: '1', page_size: '10', id_sort: 'true', tag_mode: 'false' },
    body: { ...channelFields, id: 1, mode: 'single' },
  },
  'api.channel.batch._index.ts': { methods: ['POST'], body: { ids: [1, 2] } },
  'api.channel.batch.tag.ts': { methods: ['POST'], body: { ids: [1], tag: 'fuzz' } },
  'api.channel.disabled.ts': { methods: ['DELETE'] },
  'api.channel.fetch_models.$id.ts': { methods: ['GET'] },
  'api.channel.fetch_models._index.ts': {
    methods: ['POST'],
    body: { base_url: 'http://127.0.0.1:1', type: 1, key: 'sk-fuzz', other: '', setting: '' },
  },
  'api.channel.fix.ts': { methods: ['POST'] },
  'api.channel.models.ts': { methods: ['GET'] },
  'api.channel.models_enabled.ts': { methods: ['GET'] },
  'api.channel.search.ts': {
    methods: ['GET'],
    query: {
      keyword: 'fuzz',
      group: 'default',
      model: 'gpt-4o',
      id_sort: 'true',
      tag_mode: 'false',
      p: '1',
      page_size: '10',
    },
  },
  'api.channel.tag._index.ts': {
    methods: ['PUT'],
    body: {
      tag: 'fuzz',
      new_tag: 'fuzz2',
      model_mapping: '',
      groups: 'default',
      models: 'gpt-4o',
      priority: 1,
      weight: 1,
    },
  },
  'api.channel.tag.disabled.ts': { methods: ['POST'], body: { tag: 'fuzz' } },
  'api.channel.tag.enabled.ts': { methods: ['POST'], body: { tag: 'fuzz' } },
  'api.channel.test.$id.ts': { methods: ['GET'], query: { model: 'gpt-4o' } },
  'api.channel.test._index.ts': { methods: ['GET'] },
  'api.channel.update_balance.$id.ts': { methods: ['GET'] },
  'api.channel.update_balance._index.ts': { methods: ['GET'] },
  'api.data._index.ts': {
    methods: ['GET'],
    query: { username: '', start_timestamp: '1763895600', end_timestamp: '1763982000', default_time: 'hour' },
  },
  'api.data.self._index.ts': {
    methods: ['GET'],
    query: { start_timestamp: '1763895600', end_timestamp: '1763982000' },
  },
  'api.group.ts': { methods: ['GET'] },
  'api.log._index.ts': { methods: ['GET', 'DELETE'], query: { ...logFilters, target_timestamp: '0' } },
  'api.log.self._index.ts': { methods: ['GET'], query: logFilters },
  'api.log.self.stat.ts': { methods: ['GET'], query: logFilters },
  'api.log.stat.ts': { methods: ['GET'], query: logFilters },
  'api.mj._index.ts': { methods: ['GET'], query: mjFilters },
  'api.mj.self._index.ts': { methods: ['GET'], query: mjFilters },
  'api.models.ts': { methods: ['GET'] },
  'api.oauth.email.bind.ts': { methods: ['GET'], query: { email: 'fuzz@example.com', code: '123456' } },
  'api.oauth.github.ts': { methods: ['GET'], query: { code: 'c', state: 's' } },
  'api.oauth.linuxdo.ts': { methods: ['GET'], query: { code: 'c', state: 's' } },
  'api.oauth.state.ts': { methods: ['GET'], query: { aff: 'ABCD' } },
  'api.oauth.telegram.bind.ts': {
    methods: ['GET'],
    query: { id: '1', first_name: 'f', username: 'u', auth_date: '1', hash: 'h' },
  },
  'api.oauth.telegram.login.ts': {
    methods: ['GET'],
    query: { id: '1', first_name: 'f', username: 'u', auth_date: '1', hash: 'h' },
  },
  'api.oauth.wechat.bind.ts': { methods: ['GET'], query: { code: 'c' } },
  'api.oauth.wechat.ts': { methods: ['GET'], query: { code: 'c' } },
  'api.option._index.ts': { methods: ['GET', 'PUT'], body: { key: 'SystemName', value: 'Fuzz' } },
  'api.option.rest_model_ratio.ts': { methods: ['POST'] },
  'api.order.adminOrderList.ts': {
    methods: ['GET'],
    query: { user_id: '1', email: 'fuzz@example.com', page: '1', page_size: '10' },
  },
  'api.order.createOrder.ts': {
    methods: ['GET'],
    query: { pay_method: '1', product: '7.30', order_type: '1' },
  },
  'api.order.getOrderList.ts': { methods: ['GET'], query: { page: '1', page_size: '10' } },
  'api.order.getOrderStatus.ts': {
    methods: ['GET'],
    query: { order_id: 'SY00000000000000000000000000000000' },
  },
  'api.payment.alipay.notify.ts': {
    methods: ['POST'],
    body: {
      out_trade_no: 'SY0',
      trade_status: 'TRADE_SUCCESS',
      total_amount: '7.30',
      sign: 'x',
      app_id: '1',
    },
  },
  'api.payment.wechatpay.notify.ts': {
    methods: ['POST'],
    body: { id: 'x', event_type: 'TRANSACTION.SUCCESS', resource: { ciphertext: 'x', nonce: 'n' } },
  },
  'api.pricing.ts': { methods: ['GET'] },
  'api.product.getProductConfig.ts': { methods: ['GET'] },
  'api.product.getv3price.ts': { methods: ['GET'] },
  'api.redemption.$id.ts': { methods: ['GET', 'DELETE'] },
  'api.redemption._index.ts': {
    methods: ['GET', 'POST', 'PUT'],
    query: { p: '1', page_size: '10', status_only: 'false' },
    body: { id: 1, name: 'fuzz', quota: 1000, count: 1, status: 1, status_only: false },
  },
  'api.redemption.search.ts': { methods: ['GET'], query: { keyword: 'fuzz', p: '1', page_size: '10' } },
  'api.reset_password.ts': { methods: ['GET'], query: { email: 'fuzz@example.com', turnstile: '' } },
  'api.status.ts': { methods: ['GET'] },
  'api.task._index.ts': { methods: ['GET'], query: taskFilters },
  'api.task.self.ts': { methods: ['GET'], query: taskFilters },
  'api.token.$id.ts': { methods: ['GET', 'DELETE'] },
  'api.token._index.ts': {
    methods: ['GET', 'POST', 'PUT'],
    query: { p: '1', size: '10', status_only: 'false' },
    body: {
      id: 1,
      name: 'fuzz',
      remain_quota: 1000,
      unlimited_quota: false,
      expired_time: -1,
      model_limits_enabled: false,
      model_limits: '',
      allow_ips: '',
      group: '',
      count: 1,
      status: 1,
    },
  },
  'api.token.search.ts': {
    methods: ['GET'],
    query: { keyword: 'fuzz', token: 'sk-abc', p: '1', size: '10' },
  },
  'api.user.$id.ts': { methods: ['GET'] },
  'api.user._index.ts': {
    methods: ['GET', 'POST', 'PUT'],
    query: { p: '1', page_size: '10' },
    body: {
      id: 2,
      username: 'fuzzuser',
      display_name: 'Fuzz',
      password: 'fuzzpass1',
      group: 'default',
      quota: 0,
      add_quota: 0,
    },
  },
  'api.user.aff.ts': { methods: ['GET'] },
  'api.user.aff_transfer.ts': { methods: ['POST'], body: { quota: 1 } },
  'api.user.login.ts': {
    methods: ['POST'],
    query: { turnstile: '' },
    body: { username: 'fuzzuser', password: 'fuzzpass1' },
  },
  'api.user.logout.ts': { methods: ['GET'] },
  'api.user.manage.ts': { methods: ['POST'], body: { id: 2, action: 'disable' } },
  'api.user.models.ts': { methods: ['GET'] },
  'api.user.register.ts': {
    methods: ['POST'],
    query: { turnstile: '' },
    body: {
      username: 'fuzzreg',
      password: 'fuzzpass1',
      password2: 'fuzzpass1',
      email: '',
      verification_code: '',
      aff_code: '',
    },
  },
  'api.user.reset.ts': { methods: ['POST'], body: { email: 'fuzz@example.com', token: 'x' } },
  'api.user.search.ts': {
    methods: ['GET'],
    query: { keyword: 'fuzz', group: 'default', p: '1', page_size: '10' },
  },
  'api.user.self.groups.ts': { methods: ['GET'] },
  'api.user.self.ts': {
    methods: ['GET', 'PUT', 'DELETE'],
    body: { username: 'fuzzself', display_name: 'Fuzz', password: '', password2: '', confirm: 'nobody' },
  },
  'api.user.setting.ts': {
    methods: ['PUT'],
    body: {
      notify_type: 'email',
      quota_warning_threshold: 1000,
      webhook_url: '',
      webhook_secret: '',
      notification_email: '',
    },
  },
  'api.user.token.ts': { methods: ['GET'] },
  'api.user.topup.ts': { methods: ['POST'], body: { key: '0123456789abcdef0123456789abcdef' } },
  'api.verification.ts': {
    methods: ['GET'],
    query: { email: 'fuzz@example.com', turnstile: '', purpose: 'register' },
  },
  'api.version.$id.ts': { methods: ['GET', 'DELETE'] },
  'api.version.latest.ts': { methods: ['GET'] },
  'api.version.list.ts': { methods: ['GET'], query: { p: '1', page_size: '10' } },
  'api.version.ts': {
    methods: ['POST', 'PUT'],
    body: {
      Id: 1,
      Version: '1.0.0',
      DownUrl: 'https://example.com/a',
      FileMd5: '',
      ForceIds: '',
      Force: 0,
      OsType: 1,
      Remark: '',
    },
  },
};

/**
 * `api.channel.fetch_models.$id.ts` -> `/api/channel/fetch_models/{id}`; `_index` -> a trailing slash. A URL cannot
 * carry a lone surrogate (its UTF-8 bytes decode to U+FFFD), so the parameter is made well-formed first.
 */
export function routePath(file: string, params: Record<string, string>): string {
  const segments = file
    .replace(/^api\./, '')
    .replace(/\.ts$/, '')
    .split('.')
    .map((s) =>
      s.startsWith('$')
        ? encodeURIComponent((params[s.slice(1)] ?? '').toWellFormed())
        : s === '_index'
          ? ''
          : s,
    );
  return `/api/${segments.join('/')}`;
}

export function routeParams(file: string): string[] {
  return file
    .split('.')
    .filter((s) => s.startsWith('$'))
    .map((s) => s.slice(1));
}
