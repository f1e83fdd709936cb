import { describe, expect, it, vi } from 'vitest';
import { extractKey } from '../core/auth.ts';
import { type PriceTables, resolvePrice } from '../core/pricing.ts';
import type { ChannelConfig } from '../providers/types.ts';
import { Flow, type Overflow } from './flow.ts';
import { responseHold, responseRequestId, selectProtocol } from './gateway.ts';
import { realtimeTarget } from './upstream.ts';
import { errorEvent, eventInfo, realtimeUsage } from './usage.ts';

const channel = (over: Partial<ChannelConfig> = {}): ChannelConfig => ({
  id: 7,
  type: 1,
  name: 'c',
  key: 'sk-up',
  baseUrl: '',
  other: '',
  openaiOrganization: null,
  setting: {},
  paramOverride: {},
  ...over,
});

describe('realtime usage', () => {
  it("maps response.done's usage: the prompt and completion include their audio tokens", () => {
    const u = realtimeUsage({
      total_tokens: 130,
      input_tokens: 60,
      output_tokens: 70,
      input_token_details: { text_tokens: 20, audio_tokens: 40, cached_tokens: 16 },
      output_token_details: { text_tokens: 10, audio_tokens: 60 },
    });
    expect(u).toMatchObject({
      promptTokens: 60,
      completionTokens: 70,
      audioPromptTokens: 40,
      audioCompletionTokens: 60,
      // No cache discount for realtime (new-api's formula); cached tokens are inside the text/audio figures.
      cachedTokens: 0,
    });
    expect(realtimeUsage(null)).toBeNull();
    expect(realtimeUsage({ input_tokens: 5, output_tokens: -3 })).toMatchObject({
      promptTokens: 5,
      completionTokens: 0,
    });
  });

  it('reads the response id, text deltas and usage of upstream events, and ignores what is not an event', () => {
    expect(eventInfo('{"type":"response.created","response":{"id":"resp_1","usage":null}}')).toEqual({
      type: 'response.created',
      responseId: 'resp_1',
      text: '',
      usage: null,
    });
    expect(eventInfo('{"type":"response.output_text.delta","response_id":"resp_1","delta":"Hi"}')?.text).toBe(
      'Hi',
    );
    expect(eventInfo('{"type":"response.audio_transcript.delta","response_id":"r","delta":"yo"}')?.text).toBe(
      'yo',
    );
    expect(eventInfo('{"type":"response.output_audio.delta","response_id":"r","delta":"AAAA"}')?.text).toBe(
      '',
    );
    const done = eventInfo(
      '{"type":"response.done","response":{"id":"resp_2","usage":{"input_tokens":3,"output_tokens":4,"output_token_details":{"audio_tokens":4}}}}',
    );
    expect(done).toMatchObject({
      responseId: 'resp_2',
      usage: { promptTokens: 3, audioCompletionTokens: 4 },
    });
    expect(eventInfo('not json')).toBeNull();
    expect(eventInfo('[1]')).toBeNull();
  });

  it('writes OpenAI realtime error events', () => {
    const e = JSON.parse(errorEvent({ type: 'insufficient_user_quota', code: 'x', message: 'no' }));
    expect(e).toMatchObject({
      type: 'error',
      error: { type: 'insufficient_user_quota', code: 'x', message: 'no' },
    });
    expect(e.event_id).toMatch(/^event_/);
  });
});

describe('realtime handshake', () => {
  const url = new URL('http://relay/v1/realtime?model=m');
  it('takes the key from the openai-insecure-api-key subprotocol item first, else the usual headers', () => {
    expect(
      extractKey(
        new Headers({ 'sec-websocket-protocol': 'realtime, openai-insecure-api-key.sk-abc, x' }),
        url,
      ),
    ).toBe('sk-abc');
    expect(
      extractKey(new Headers({ 'sec-websocket-protocol': 'realtime', authorization: 'Bearer sk-h' }), url),
    ).toBe('sk-h');
    expect(extractKey(new Headers({ 'sec-websocket-protocol': 'openai-insecure-api-key.' }), url)).toBeNull();
  });

  it('selects realtime, never the key item', () => {
    expect(selectProtocol('openai-insecure-api-key.sk-1, realtime')).toBe('realtime');
    expect(selectProtocol('openai-insecure-api-key.sk-1, openai-beta.realtime-v1')).toBe(
      'openai-beta.realtime-v1',
    );
    expect(selectProtocol('openai-insecure-api-key.sk-1')).toBeNull();
    expect(selectProtocol(null)).toBeNull();
  });

  it('derives one request id per session and response, within the log column', () => {
    const session = 'a'.repeat(32);
    expect(responseRequestId(session, 'resp_ABC123')).toBe(`${session}-resp_ABC123`);
    expect(responseRequestId(session, 'resp_ABC123')).toBe(responseRequestId(session, 'resp_ABC123'));
    const long = responseRequestId(session, `resp_${'x'.repeat(60)}`);
    expect(long).toHaveLength(64);
    expect(long).not.toBe(responseRequestId(session, `resp_${'y'.repeat(60)}`));
    expect(responseRequestId(session, 'a b')).toHaveLength(64);
  });
});

describe('realtime upstream target', () => {
  it('OpenAI: wss URL with the model, the key as a Bearer header, beta only when the client asked', () => {
    expect(realtimeTarget(channel(), 'gpt-realtime', false)).toEqual({
      url: 'wss://api.openai.com/v1/realtime?model=gpt-realtime',
      headers: { authorization: 'Bearer sk-up' },
      protocols: ['realtime'],
    });
    const beta = realtimeTarget(
      channel({ baseUrl: 'http://127.0.0.1:9/v1', openaiOrganization: 'org-1' }),
      'm',
      true,
    );
    expect(beta.url).toBe('ws://127.0.0.1:9/v1/realtime?model=m');
    expect(beta.headers).toEqual({
      authorization: 'Bearer sk-up',
      'openai-beta': 'realtime=v1',
      'openai-organization': 'org-1',
    });
  });

  it('Azure: /openai/realtime with api-version and deployment (no dots), the key in api-key', () => {
    const t = realtimeTarget(
      channel({ type: 3, baseUrl: 'https://res.openai.azure.com/', other: '2024-10-01-preview' }),
      'gpt-4o-realtime-preview',
      false,
    );
    expect(t.url).toBe(
      'wss://res.openai.azure.com/openai/realtime?api-version=2024-10-01-preview&deployment=gpt-4o-realtime-preview',
    );
    expect(t.headers).toEqual({ 'api-key': 'sk-up' });
    expect(realtimeTarget(channel({ type: 3, baseUrl: 'https://r' }), 'gpt-4.1', false).url).toBe(
      'wss://r/openai/realtime?api-version=2024-12-01-preview&deployment=gpt-41',
    );
    expect(() => realtimeTarget(channel({ type: 3 }), 'm', false)).toThrow(/base URL/);
    expect(() => realtimeTarget(channel({ type: 14 }), 'm', false)).toThrow(/does not serve/);
  });
});

describe('realtime hold', () => {
  const tables: PriceTables = {
    modelRatio: { rt: 2, fixed: 0 },
    completionRatio: { rt: 4 },
    modelPrice: { fixed: 0.02 },
    groupRatio: { default: 1, vip: 0.5 },
    cacheRatio: {},
    createCacheRatio: {},
    audioRatio: { rt: 16 },
    audioCompletionRatio: { rt: 2 },
    imageRatio: {},
    quotaPerUnit: 500_000,
    preConsumedQuota: 500,
    selfUseMode: false,
  };
  it('holds PreConsumedQuota audio tokens in and out at the dearest rates, or one fixed price', () => {
    // (500·16 + 500·max(4, 16·2))·2·G
    expect(responseHold(resolvePrice(tables, 'rt', 'default')!, tables)).toBe(48_000);
    expect(responseHold(resolvePrice(tables, 'rt', 'vip')!, tables)).toBe(24_000);
    expect(responseHold(resolvePrice(tables, 'fixed', 'default')!, tables)).toBe(10_000);
  });
});

describe('realtime flow control (ADR 039)', () => {
  const socket = () => {
    const s = { bufferedAmount: 0, readyState: 1, paused: false, pause: () => {}, resume: () => {} };
    s.pause = () => {
      s.paused = true;
    };
    s.resume = () => {
      s.paused = false;
    };
    return s;
  };
  const limits = { highWater: 1000, max: 5000, stallMs: 200 };

  it('pauses the source above the high-water mark and resumes it once the backlog halves', () => {
    vi.useFakeTimers();
    try {
      const source = socket();
      const sink = socket();
      const overflows: Overflow[] = [];
      const flow = new Flow(source as never, sink as never, limits, (o) => overflows.push(o), Date.now);
      sink.bufferedAmount = 900;
      flow.sent();
      expect(source.paused).toBe(false);
      sink.bufferedAmount = 1200;
      flow.sent();
      expect(source.paused).toBe(true);
      sink.bufferedAmount = 600;
      vi.advanceTimersByTime(50);
      expect(source.paused).toBe(true);
      sink.bufferedAmount = 500;
      vi.advanceTimersByTime(50);
      expect(source.paused).toBe(false);
      expect(overflows).toEqual([]);
      expect(flow.overflowed).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it('overflows past the hard limit at once, and after the stall time above the mark', () => {
    vi.useFakeTimers();
    try {
      const sink = socket();
      const overflows: Overflow[] = [];
      const hard = new Flow(socket() as never, sink as never, limits, (o) => overflows.push(o), Date.now);
      sink.bufferedAmount = 6000;
      hard.sent();
      expect(overflows).toEqual([{ backlog: 6000, stalledMs: null }]);
      expect(hard.overflowed).toBe(true);

      const source = socket();
      const slow = socket();
      const stalled = new Flow(source as never, slow as never, limits, (o) => overflows.push(o), Date.now);
      slow.bufferedAmount = 2000;
      stalled.sent();
      vi.advanceTimersByTime(150);
      expect(overflows).toHaveLength(1);
      vi.advanceTimersByTime(100);
      expect(overflows).toHaveLength(2);
      expect(overflows[1]!.stalledMs).toBeGreaterThan(200);
      // The source is read again: the session's end needs the upstream's answers.
      expect(source.paused).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });
});
