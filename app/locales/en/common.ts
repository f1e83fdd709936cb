import type { CommonResources } from '#app/locales/zh/common.ts';

const common: CommonResources = {
  app: {
    name: 'Switchyard',
    logoAlt: '{{name}} logo',
    skipToContent: 'Skip to main content',
    newYear: 'Happy New Year!',
  },
  nav: {
    main: 'Main navigation',
    home: 'Home',
    console: 'Console',
    chat: 'Chat',
    pricing: 'Pricing',
    about: 'Help centre',
    guide: 'Beginner guide',
    usebook: 'Usage manual',
    download: 'Download client',
  },
  sidebar: {
    label: 'Console menu',
    channel: 'Channels',
    token: 'Tokens',
    chat: 'Chat',
    detail: 'Dashboard',
    redemption: 'Redemption codes',
    topup: 'Wallet',
    user: 'Users',
    order: 'Orders',
    log: 'Logs',
    midjourney: 'Drawing tasks',
    task: 'Async tasks',
    setting: 'Settings',
    version: 'Versions',
    collapse: 'Collapse sidebar',
    expand: 'Expand sidebar',
  },
  theme: {
    label: 'Theme',
    light: 'Light',
    dark: 'Dark',
    toDark: 'Switch to dark mode',
    toLight: 'Switch to light mode',
  },
  language: {
    label: 'Language',
    zh: '中文',
    en: 'English',
  },
  user: {
    menu: 'User menu',
    profile: 'Edit profile',
    logout: 'Log out',
    login: 'Log in',
    register: 'Register',
  },
  badge: {
    selfUse: 'Self-use mode',
    demo: 'Demo site',
  },
  home: {
    title: 'Home',
    welcome: 'Welcome to {{name}}',
    intro:
      '{{name}} is an AI model gateway: hold a quota balance, create tokens and call models through many upstream channels.',
    apiBase: 'API base URL:',
    start: 'Open the console',
    notice: 'Notice',
  },
  about: {
    title: 'About',
    empty: 'The administrator has not set the about content yet.',
  },
  notFound: {
    title: 'Page not found',
    body: 'The page does not exist, please check your browser address.',
    home: 'Back to home',
  },
  errorPage: {
    title: 'Something went wrong',
    body: 'An error occurred while loading this page. Please try again later.',
    retry: 'Try again',
  },
  footer: {
    default: '{{name}} {{version}} · powered by Switchyard',
  },
  pagination: {
    label: 'Pagination',
    previous: 'Previous',
    next: 'Next',
    page: 'Page {{page}} of {{pages}}, {{total}} in total',
  },
  requestBody: {
    tooLarge: 'Request body too large (limit {{max}} bytes)',
    tooDeep: 'The JSON body nests deeper than {{max}} levels',
  },
  errors: {
    expired: 'Not logged in or login expired, please log in again',
    tooManyRequests: 'Too many requests, try again later',
    internal: 'Internal server error, contact administrator',
    demoOnly: 'This site is a demo only, no server',
    withMessage: 'Error: {{message}}',
    network: 'Unable to connect to server',
    statusLoad: 'Failed to load status',
    unexpected: 'Request failed',
    crossOriginTitle: 'Request refused',
    crossOrigin:
      "request from another site refused: changes can only be submitted from this console's own pages",
    nulText: 'Text must not contain the NUL character (U+0000)',
    invalidInput: 'Please check the input',
    apiNotFound: 'No such API: check the path',
    methodNotAllowed: 'Method not allowed',
  },
  toast: {
    region: 'Notifications',
    dismiss: 'Dismiss',
    loggedOut: 'Logged out successfully',
    saved: 'Saved',
  },
  preferences: {
    pageSize: 'Rows per page',
  },
};

export default common;
