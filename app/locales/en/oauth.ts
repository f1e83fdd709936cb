import type { OauthResources } from '#app/locales/zh/oauth.ts';

const oauth: OauthResources = {
  provider: {
    github: 'GitHub',
    linuxdo: 'LinuxDO',
    wechat: 'WeChat',
    telegram: 'Telegram',
  },
  errors: {
    disabled: 'The administrator has not enabled login and registration via {{provider}}',
    registerDisabled: 'The administrator has turned off new user registration',
    stateInvalid: 'The state is invalid or has expired, please start the authorisation again',
    codeMissing: 'The authorisation code is missing',
    exchangeFailed: 'Could not reach {{provider}}, please try again later',
    profileInvalid: 'Could not read the {{provider}} account',
    linuxdoInactive: 'This LinuxDO account is not active or is silenced',
    alreadyBound: 'This {{provider}} account is already bound to another user',
    notConfigured: 'The administrator has not configured {{provider}}',
    codeEmpty: 'The verification code cannot be empty',
    wechatFailed: 'The WeChat server refused the request: {{message}}',
    telegramInvalid: 'Invalid Telegram login data',
    telegramExpired: 'The Telegram login data has expired, please log in again',
    emailRequired: 'Please enter email',
    emailCodeRequired: 'Please enter email verification code',
    emailInvalid: 'Invalid email address',
    emailTaken: 'This email is already in use',
  },
  success: {
    bound: 'Bound successfully',
    loggedIn: 'Logged in successfully',
  },
  callback: {
    title: 'Third-party login',
    failed: 'Authorisation failed',
    toSettings: 'Go to personal settings',
    redirecting: 'Taking you to personal settings…',
  },
};

export default oauth;
