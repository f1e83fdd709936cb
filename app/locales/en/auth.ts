import type { AuthResources } from '#app/locales/zh/auth.ts';

const auth: AuthResources = {
  errors: {
    tooManyRequests: 'Too many requests, try again later',
    invalidInput: 'Invalid parameters',
    internal: 'Internal server error, contact administrator',
  },
  api: {
    notLoggedIn: 'Not allowed: not logged in and no access token provided',
    tokenInvalid: 'Not allowed: the access token is invalid',
    headerMissing: 'Not allowed: the New-Api-User header is missing',
    headerInvalid: 'Not allowed: the New-Api-User header is malformed',
    headerMismatch: 'Not allowed: New-Api-User does not match the logged-in user',
    banned: 'User has been banned',
    forbidden: 'Not allowed: insufficient privileges',
  },
  login: {
    empty: 'Please enter username and password',
    wrong: 'Username or password is wrong, or user has been banned',
    banned: 'User has been banned',
    deregistered: 'This account has been deregistered and cannot log in',
    throttled: 'Too many failed sign-in attempts for this account, try again in {{seconds}} s',
    passwordDisabled: 'The administrator has turned off password login',
    success: 'Logged in successfully',
    tooLong: 'Username and password are at most 255 characters',
  },
  logout: {
    success: 'Logged out successfully',
  },
  register: {
    disabled: 'The administrator has turned off new user registration',
    passwordDisabled:
      'The administrator has turned off registration by password; please register with a third-party account',
    empty: 'Username and password cannot be empty',
    usernameLength: 'Username must be 1 to 20 characters long',
    usernameInvalid: 'Username cannot contain whitespace or control characters',
    usernameTaken: 'Username already exists',
    passwordShort: 'Password length must not be less than 8',
    passwordLong: 'Password length must not be more than 20',
    mismatch: 'The two passwords do not match',
    emailRequired:
      'The administrator has turned on e-mail verification; enter your e-mail address and verification code',
    emailTaken: 'This e-mail address is already taken',
    affInvalid: 'Invalid invitation code',
    success: 'Registered successfully',
  },
  email: {
    empty: 'E-mail cannot be empty',
    invalid: 'The e-mail address is not valid',
    taken: 'This e-mail address is already taken',
    domainNotAllowed:
      'The administrator has turned on the e-mail domain whitelist and the domain of your address is not in it',
    aliasNotAllowed:
      'The administrator has turned on the e-mail alias restriction and your address was refused because it contains special characters',
    codeInvalid: 'The verification code is wrong or has expired',
    codeAttempts: 'Too many wrong verification codes, request a new code',
    codeSent: 'Verification code sent, check your mailbox',
    smtpMissing: 'The SMTP server is not configured',
    sendFailed: 'Failed to send the e-mail: {{reason}}',
  },
  turnstile: {
    empty: 'Turnstile token is empty',
    failed: 'Turnstile verification failed, please refresh and retry!',
    unavailable: 'The Turnstile verification service is unavailable, try again later',
  },
  reset: {
    sent: 'If the address belongs to an account, a reset link has been sent; check your mailbox',
    invalid: 'The reset link is invalid or has expired',
    success: 'Your password has been reset and copied to the clipboard',
  },
  mail: {
    codeSubject: '{{system}} e-mail verification',
    codeText:
      'Hello, you are verifying your e-mail address on {{system}}. Your verification code is: {{code}}. It is valid for {{minutes}} minutes. If this was not you, ignore this message.',
    codeHtml:
      '<p>Hello, you are verifying your e-mail address on {{system}}.</p><p>Your verification code is: <strong>{{code}}</strong></p><p>It is valid for {{minutes}} minutes. If this was not you, ignore this message.</p>',
    resetSubject: '{{system}} password reset',
    resetText:
      'Hello, you asked to reset your password on {{system}}. Open this link to reset it: {{link}}. The link is valid for {{minutes}} minutes. If this was not you, ignore this message.',
    resetHtml:
      '<p>Hello, you asked to reset your password on {{system}}.</p><p>Click <a href="{{link}}">here</a> to reset it.</p><p>If the link does not open, copy it into your browser:<br>{{link}}</p><p>The link is valid for {{minutes}} minutes. If this was not you, ignore this message.</p>',
    quotaWarningTitle: 'Your quota is running out',
    quotaWarningContent:
      '{{value}}: your remaining quota is {{value}}. Top up in time to keep your service running. Top-up link: {{value}}',
  },
  audit: {
    newUserQuota: 'Quota for a new user: {{quota}}',
    inviterQuota: 'Invited {{username}}: invitation reward {{quota}} (pending earnings)',
    inviteeQuota: 'Registered with an invitation code: bonus {{quota}}',
  },
};

export default auth;
