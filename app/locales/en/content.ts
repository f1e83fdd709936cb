import type { ContentResources } from '#app/locales/zh/content.ts';

const content: ContentResources = {
  copy: {
    button: 'Copy',
    label: 'Copy {{what}}',
    copied: 'Copied: {{text}}',
    failed: 'Cannot copy to clipboard, please copy manually',
  },
  chat: {
    title: 'Chat',
    tabs: 'Chat apps',
    noToken: 'There are currently no enablement tokens available, please confirm if one is enabled!',
    redirecting: 'Going to the tokens page in {{seconds}} seconds…',
    goTokens: 'Go to tokens',
    configError: 'Chat link configuration error, contact admin',
    unconfigured: 'Please contact admin to configure chat link',
    frameTitle: 'Chat: {{name}}',
    openNewTab: 'Open in a new tab',
    frameHint: 'If the chat does not show below (some apps refuse to be embedded), open it in a new tab.',
    appLink: '“{{name}}” is a client app; open it on a device where the app is installed:',
    openApp: 'Open in the app',
  },
  notice: {
    title: 'Notice',
    dismiss: 'Close notice',
    dismissHint: 'Once closed, the same notice is not shown again.',
  },
  home: {
    welcome: 'Welcome to {{name}}',
    intro:
      '{{name}} is an AI model gateway: one OpenAI-compatible API in front of many upstream channels, billed by quota.',
    apiAddress: 'API address',
    baseUrl: 'Base URL for the OpenAI SDK',
    offersTitle: 'What you get',
    offers: {
      api: 'An OpenAI-compatible API: /v1/chat/completions, /v1/embeddings, images, audio and more; existing SDKs and clients work by changing the address.',
      models: '{{count}} models available from several upstream channels, with retries and load balancing.',
      modelsNone:
        'Models from several upstream channels, with retries and load balancing (the admin has not enabled any model yet).',
      tokens: 'Many tokens: each with its own quota, expiry, allowed models and IP allowlist.',
      billing: 'Clear billing: by usage or per call, with the price and the cost of every call on record.',
    },
    cta: {
      console: 'Open the console',
      login: 'Log in',
      register: 'Sign up',
      guide: 'Beginner guide',
      pricing: 'Model prices',
    },
    infoTitle: 'About this site',
    version: 'Version',
    since: 'Running since',
  },
  newYear: {
    button: 'New-year surprise',
    greeting: 'Happy New Year! All the best for the year ahead!',
  },
  about: {
    title: 'About',
    defaultIntro:
      '{{name}} is an AI model gateway offering an OpenAI-compatible API and quota-billed tokens.',
    defaultHelp:
      'New here? Read the beginner guide; for top-up, tokens, groups and logs read the usage manual.',
    version: 'Version: {{version}}',
  },
  guide: {
    title: 'Beginner guide',
    intro:
      'Three steps to call models through {{name}}: note the API address, create a token, make your first request.',
    step1: 'Step 1: the API address',
    step1Body: "This site's API address is below. With the OpenAI SDK, the base URL ends in /v1.",
    step2: 'Step 2: create a token',
    step2Body:
      'On the tokens page choose “Add token”, give it a name and a quota, submit, and copy the key starting with sk-. Keep it as secret as a password.',
    step2Signed: 'You have {{count}} enabled tokens.',
    step2Visitor: 'Log in or sign up first to create a token.',
    createToken: 'Go to tokens',
    step3: 'Step 3: your first request',
    step3Body:
      'Put the key in the OPENAI_API_KEY environment variable, then run any of the examples. Their model, {{model}}, is available on this site now.',
    step3NoModel:
      'This site has no model enabled yet; contact the admin. The examples use {{model}} in place of a model name.',
    env: 'Set the environment variable',
    curl: 'curl',
    python: 'Python (openai SDK: pip install openai)',
    javascript: 'JavaScript (openai SDK: npm install openai)',
    stream: 'Streaming',
    streamBody: 'Set stream to true and the reply arrives piece by piece as server-sent events:',
    listModels: 'See which models your token can use',
    more: 'More models',
    moreBody: '{{count}} models are available on this site, for example:',
    pricing: 'All models and prices',
    next: 'Next: read the usage manual on top-up, group ratios and logs.',
    usebook: 'Usage manual',
  },
  usebook: {
    title: 'Usage manual',
    intro:
      "Generated from {{name}}'s current settings: account, quota, tokens, group ratios, logs and common errors.",
    toc: 'Contents',
    account: {
      title: 'Account',
      body: 'Sign up and log in to use the console. Personal settings let you change your display name and password and bind e-mail and third-party accounts.',
      selfUse: 'This site runs in self-use mode and does not accept sign-ups; ask the admin for an account.',
      register: 'Sign up',
    },
    quota: {
      title: 'Quota and top-up',
      unit: 'Everything is measured in quota: {{perUnit}} quota = 1 USD.',
      currency: 'The console shows quota as a USD amount.',
      raw: 'The console shows quota as raw numbers.',
      redeem: 'Enter a redemption code on the wallet page to add quota to your account.',
      buyCodes: 'Redemption codes can be bought here:',
      online: 'Online top-up is available; the minimum top-up is {{min}}.',
      noOnline: 'Online top-up is not enabled on this site.',
      wallet: 'Go to the wallet',
    },
    tokens: {
      title: 'Tokens',
      body: 'Calls need a token (a key starting with sk-). An account can hold many tokens, one per app.',
      fields: {
        quota: 'Quota: the most the token may spend, or unlimited (still bounded by your balance).',
        expiry: 'Expiry: never, or after 1 hour, 1 day, 1 month and so on.',
        models: 'Model limits: the token may call only the listed models.',
        ips: 'IP allowlist: only requests from these addresses are accepted.',
        group: "Group: whose channels and ratio the token's calls use.",
      },
      statuses: 'Token status: enabled, disabled, expired, exhausted; only enabled tokens can make calls.',
      manage: 'Manage tokens',
    },
    groups: {
      title: 'Groups and ratios',
      body: 'Prices come from the model ratio and the group ratio. By usage: the price per 1M input tokens = model ratio × 2 × group ratio USD, and the output price is that × the completion ratio. Per call: price per call = fixed price × group ratio.',
      group: 'Group',
      description: 'Description',
      ratio: 'Ratio',
      example:
        'For example {{model}} in group {{group}}: input {{input}} / 1M tokens, output {{output}} / 1M tokens.',
      exampleCall: 'For example {{model}} in group {{group}}: {{price}} per call.',
      pricing: 'See all model prices',
    },
    logs: {
      title: 'Logs and usage',
      body: 'Every call is logged: time, token, model, input and output tokens, quota spent and duration. Filter by time, token name and model, and see totals.',
      dashboard: 'The dashboard sums up your usage by model over time.',
      logs: 'Open the logs',
      detail: 'Open the dashboard',
    },
    tools: {
      title: 'Playground and chat',
      playground:
        'The playground lets you talk to models in the browser without a token; the cost is charged to your account.',
      chats: 'This site offers these chat apps, filled in with your first enabled token:',
      openPlayground: 'Open the playground',
    },
    errors: {
      title: 'Common errors',
      unauthorized: '401: the token is invalid, disabled or expired. Check Authorization: Bearer sk-….',
      quota:
        '403: not enough quota (the token quota or your balance is used up). Top up or raise the token quota.',
      model:
        '503 or “no available channel”: your group has no channel for that model. Pick another model or check its groups on the pricing page.',
      rateLimit:
        '429: too many requests. This site allows each user {{count}} requests every {{minutes}} minutes.',
      rateLimitGeneric: '429: too many requests, try again later.',
    },
  },
};

export default content;
