/** Namespace 'oauth' in Chinese (default and fallback). en/oauth.ts must have exactly the same keys (its type). */
const oauth = {
  provider: {
    github: 'GitHub',
    linuxdo: 'LinuxDO',
    wechat: '微信',
    telegram: 'Telegram',
  },
  errors: {
    disabled: '管理员未开启通过 {{provider}} 登录以及注册',
    registerDisabled: '管理员关闭了新用户注册',
    stateInvalid: 'state 无效或已过期，请重新发起授权',
    codeMissing: '授权码为空',
    exchangeFailed: '与 {{provider}} 通信失败，请稍后重试',
    profileInvalid: '无法读取 {{provider}} 账户信息',
    linuxdoInactive: '该 LinuxDO 账户未激活或已被禁言',
    alreadyBound: '该 {{provider}} 账户已被其他用户绑定',
    notConfigured: '管理员未配置 {{provider}}',
    codeEmpty: '验证码不能为空',
    wechatFailed: '微信服务器请求失败：{{message}}',
    telegramInvalid: '无效的 Telegram 登录数据',
    telegramExpired: 'Telegram 登录数据已过期，请重新登录',
    emailRequired: '请输入邮箱',
    emailCodeRequired: '请输入邮箱验证码',
    emailInvalid: '邮箱地址无效',
    emailTaken: '该邮箱已被占用',
  },
  success: {
    bound: '绑定成功',
    loggedIn: '登录成功',
  },
  callback: {
    title: '第三方登录',
    failed: '授权失败',
    toSettings: '前往个人设置',
    redirecting: '即将跳转到个人设置……',
  },
};

export type OauthResources = typeof oauth;
export default oauth;
