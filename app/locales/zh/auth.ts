/** Namespace 'auth' in Chinese (default and fallback). en/auth.ts must have exactly the same keys (its type). */
const auth = {
  errors: {
    tooManyRequests: '请求次数过多，请稍后再试',
    invalidInput: '无效的参数',
    internal: '服务器内部错误，请联系管理员',
  },
  api: {
    notLoggedIn: '无权进行此操作，未登录且未提供 access token',
    tokenInvalid: '无权进行此操作，access token 无效',
    headerMissing: '无权进行此操作，未提供 New-Api-User',
    headerInvalid: '无权进行此操作，New-Api-User 格式错误',
    headerMismatch: '无权进行此操作，New-Api-User 与登录用户不匹配',
    banned: '用户已被封禁',
    forbidden: '无权进行此操作，权限不足',
  },
  login: {
    empty: '请输入用户名和密码',
    wrong: '用户名或密码错误，或用户已被封禁',
    banned: '用户已被封禁',
    deregistered: '该账户已注销，无法登录',
    throttled: '该账户登录失败次数过多，请在 {{seconds}} 秒后重试',
    passwordDisabled: '管理员关闭了密码登录',
    success: '登录成功',
    tooLong: '用户名和密码最多 255 个字符',
  },
  logout: {
    success: '已退出登录',
  },
  register: {
    disabled: '管理员关闭了新用户注册',
    passwordDisabled: '管理员关闭了通过密码进行注册，请使用第三方账户验证的形式进行注册',
    empty: '用户名和密码不能为空',
    usernameLength: '用户名长度必须在 1 到 20 个字符之间',
    usernameInvalid: '用户名不能包含空白或控制字符',
    usernameTaken: '用户名已存在',
    passwordShort: '密码长度不得小于 8 位',
    passwordLong: '密码长度不得超过 20 位',
    mismatch: '两次输入的密码不一致',
    emailRequired: '管理员开启了邮箱验证，请输入邮箱地址和验证码',
    emailTaken: '邮箱地址已被占用',
    affInvalid: '邀请码无效',
    success: '注册成功',
  },
  email: {
    empty: '邮箱地址不能为空',
    invalid: '邮箱地址格式不正确',
    taken: '邮箱地址已被占用',
    domainNotAllowed: '管理员启用了邮箱域名白名单，您的邮箱地址的域名不在白名单中',
    aliasNotAllowed: '管理员已启用邮箱地址别名限制，您的邮箱地址由于包含特殊符号而被拒绝',
    codeInvalid: '验证码错误或已过期',
    codeAttempts: '验证码错误次数过多，请重新获取验证码',
    codeSent: '验证码发送成功，请检查邮箱',
    smtpMissing: 'SMTP 服务器未配置',
    sendFailed: '邮件发送失败：{{reason}}',
  },
  turnstile: {
    empty: 'Turnstile token 为空',
    failed: 'Turnstile 校验失败，请刷新重试！',
    unavailable: 'Turnstile 校验服务暂不可用，请稍后重试',
  },
  reset: {
    sent: '如果该邮箱已绑定账户，重置链接已发送，请检查邮箱',
    invalid: '重置链接非法或已过期',
    success: '密码已重置，新密码已复制到剪贴板',
  },
  mail: {
    codeSubject: '{{system}}邮箱验证邮件',
    codeText:
      '您好，你正在进行{{system}}邮箱验证。您的验证码为：{{code}}。验证码 {{minutes}} 分钟内有效，如果不是本人操作，请忽略。',
    codeHtml:
      '<p>您好，你正在进行{{system}}邮箱验证。</p><p>您的验证码为：<strong>{{code}}</strong></p><p>验证码 {{minutes}} 分钟内有效，如果不是本人操作，请忽略。</p>',
    resetSubject: '{{system}}密码重置',
    resetText:
      '您好，你正在进行{{system}}密码重置。请打开下面的链接进行密码重置：{{link}}。重置链接 {{minutes}} 分钟内有效，如果不是本人操作，请忽略。',
    resetHtml:
      '<p>您好，你正在进行{{system}}密码重置。</p><p>点击 <a href="{{link}}">此处</a> 进行密码重置。</p><p>如果链接无法点击，请将其复制到浏览器中打开：<br>{{link}}</p><p>重置链接 {{minutes}} 分钟内有效，如果不是本人操作，请忽略。</p>',
    quotaWarningTitle: '您的额度即将用尽',
    quotaWarningContent:
      '{{value}}，当前剩余额度为 {{value}}，为了不影响您的使用，请及时充值。充值链接：{{value}}',
  },
  audit: {
    newUserQuota: '新用户注册赠送 {{quota}}',
    inviterQuota: '邀请用户 {{username}} 注册，获得邀请奖励 {{quota}}（待使用收益）',
    inviteeQuota: '使用邀请码注册，获得赠送 {{quota}}',
  },
};

export type AuthResources = typeof auth;
export default auth;
