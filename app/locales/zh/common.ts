/** Chinese (default and fallback). The English file must have exactly the same keys (checked by its type). */
const common = {
  app: {
    name: 'Switchyard',
    logoAlt: '{{name}} 标志',
    skipToContent: '跳到主要内容',
    newYear: '新年快乐！',
  },
  nav: {
    main: '主导航',
    home: '首页',
    console: '控制台',
    chat: '聊天',
    pricing: '模型价格',
    about: '帮助中心',
    guide: '新手指南',
    usebook: '使用手册',
    download: '客户端下载',
  },
  sidebar: {
    label: '控制台菜单',
    channel: '渠道',
    token: '令牌',
    chat: '聊天',
    detail: '数据看板',
    redemption: '兑换码',
    topup: '钱包',
    user: '用户管理',
    order: '订单管理',
    log: '日志',
    midjourney: '绘图',
    task: '异步任务',
    setting: '设置',
    version: '版本管理',
    collapse: '收起侧边栏',
    expand: '展开侧边栏',
  },
  theme: {
    label: '主题',
    light: '浅色',
    dark: '深色',
    toDark: '切换到深色模式',
    toLight: '切换到浅色模式',
  },
  language: {
    label: '语言',
    zh: '中文',
    en: 'English',
  },
  user: {
    menu: '用户菜单',
    logout: '退出',
    login: '登录',
    register: '注册',
  },
  badge: {
    selfUse: '自用模式',
    demo: '演示站点',
  },
  home: {
    title: '首页',
    welcome: '欢迎使用 {{name}}',
    intro: '{{name}} 是一个 AI 模型网关：持有额度、创建令牌，通过多个上游渠道调用模型。',
    apiBase: '接口地址：',
    start: '进入控制台',
    notice: '公告',
  },
  about: {
    title: '关于',
    empty: '管理员尚未设置关于内容。',
  },
  notFound: {
    title: '页面不存在',
    body: '页面不存在，请检查你的浏览器地址是否正确',
    home: '返回首页',
  },
  errorPage: {
    title: '出错了',
    body: '页面加载时发生错误，请稍后重试。',
  },
  footer: {
    default: '{{name}} {{version}} · 由 Switchyard 驱动',
  },
  pagination: {
    label: '分页',
    previous: '上一页',
    next: '下一页',
    page: '第 {{page}} / {{pages}} 页，共 {{total}} 条',
  },
  errors: {
    expired: '未登录或登录已过期，请重新登录',
    tooManyRequests: '请求次数过多，请稍后再试',
    internal: '服务器内部错误，请联系管理员',
    demoOnly: '本站仅作演示之用，无服务端',
    withMessage: '错误：{{message}}',
    network: '无法连接到服务器',
    statusLoad: '加载状态失败',
    unexpected: '请求失败',
    nulText: '文本不能包含 NUL 字符（U+0000）',
    invalidInput: '请检查输入',
  },
  toast: {
    region: '通知',
    dismiss: '关闭',
    loggedOut: '注销成功！',
    saved: '保存成功',
  },
  preferences: {
    pageSize: '每页条数',
  },
};

export default common;
export type CommonResources = typeof common;
