import { describe, expect, it } from 'vitest';
import type { ChatEntry } from '#app/domain/status/status.server.ts';
import { chatIndex, chatTabs, chatTemplate, fillChatLink, serverAddress } from './chat-links.ts';

const KEY = 'abcDEF123';

describe('fillChatLink (as new-api fills chat links)', () => {
  it('puts the sk- key and the URL-encoded address into the template', () => {
    const link = fillChatLink(
      'https://app.nextchat.dev/#/?settings={"key":"{key}","url":"{address}"}',
      KEY,
      'https://api.example.com:8443/base',
    );
    expect(link).toEqual({
      kind: 'frame',
      url: 'https://app.nextchat.dev/#/?settings={"key":"sk-abcDEF123","url":"https%3A%2F%2Fapi.example.com%3A8443%2Fbase"}',
    });
  });
  it('fills every occurrence', () => {
    expect(fillChatLink('https://c.example/?a={key}&b={key}&c={address}/v1', KEY, 'http://x')?.url).toBe(
      'https://c.example/?a=sk-abcDEF123&b=sk-abcDEF123&c=http%3A%2F%2Fx/v1',
    );
  });
  it('offers custom app schemes as links, not frames', () => {
    expect(fillChatLink('opencat://team/join?domain={address}&token={key}', KEY, 'http://x')).toEqual({
      kind: 'app',
      url: 'opencat://team/join?domain=http%3A%2F%2Fx&token=sk-abcDEF123',
    });
  });
  it.each([
    '',
    '   ',
    'not a url {key}',
    'javascript:alert("{key}")',
    'JavaScript:alert(1)',
    'data:text/html,<script>1</script>',
    'file:///etc/passwd',
    'https://',
    'https://ok.example/\n{key}',
  ])('refuses %j (a configuration error)', (template) => {
    expect(fillChatLink(template, KEY, 'http://x')).toBeNull();
  });
});

describe('chatIndex', () => {
  it('defaults to 0 and accepts only an index of the list', () => {
    expect(chatIndex(undefined, 2)).toBe(0);
    expect(chatIndex('1', 2)).toBe(1);
    expect(chatIndex('2', 2)).toBeNull();
    expect(chatIndex('-1', 2)).toBeNull();
    expect(chatIndex('1.0', 2)).toBeNull();
    expect(chatIndex('abc', 2)).toBeNull();
    expect(chatIndex(undefined, 0)).toBeNull();
  });
});

describe('chat tabs and templates', () => {
  const chats: ChatEntry[] = [{ One: 'https://one.example/{key}' }, { Two: 'https://two.example/' }];
  it('names each tab by its chat', () => {
    expect(chatTabs(chats)).toEqual([
      { id: '0', name: 'One' },
      { id: '1', name: 'Two' },
    ]);
  });
  it('reads the template of an index', () => {
    expect(chatTemplate(chats, 1)).toBe('https://two.example/');
    expect(chatTemplate(chats, 5)).toBeNull();
  });
});

describe('serverAddress', () => {
  it('is ServerAddress without trailing slashes, else the request origin', () => {
    expect(serverAddress('https://api.example.com/', 'http://localhost:3000/chat')).toBe(
      'https://api.example.com',
    );
    expect(serverAddress('', 'http://127.0.0.1:5000/guide?x=1')).toBe('http://127.0.0.1:5000');
  });
});
