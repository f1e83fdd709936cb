import type { PlaygroundResources } from '#app/locales/zh/playground.ts';

const playground: PlaygroundResources = {
  title: 'Playground',
  expired: 'Not signed in or the session has expired, please sign in again',
  settings: {
    heading: 'Model settings',
    group: 'Group',
    model: 'Model',
    noModels: 'No model is available in this group',
    applyGroup: 'Switch group',
    temperature: 'Temperature',
    temperatureHint: 'From 0.1 to 1; higher gives more random answers',
    maxTokens: 'Max tokens',
    maxTokensHint: '0 means no limit',
    system: 'System prompt',
  },
  chat: {
    heading: 'Conversation',
    empty: 'Send a message to start the conversation.',
    you: 'You',
    assistant: 'Assistant',
    input: 'Message',
    placeholder: 'Type a message, Ctrl + Enter to send',
    send: 'Send',
    sending: 'Sending…',
    stop: 'Stop',
    clear: 'Clear context',
    status: {
      loading: 'Waiting for the reply…',
      incomplete: 'Generating…',
      complete: 'Reply complete',
      error: 'Error',
    },
  },
  errors: {
    empty: 'Please enter a message',
    tooLong: 'The message is too long (at most {{max}} characters)',
    noModel: 'Please choose a model',
    badReply: "The model's reply could not be read",
    network: 'Network error, please try again later',
    unknownIntent: 'Unknown action',
  },
};

export default playground;
