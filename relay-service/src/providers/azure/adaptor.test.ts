import { describe, expect, it } from 'vitest';
import { usage } from '../../core/usage.ts';
import { openaiAdaptor } from '../openai/adaptor.ts';
import { channel, relayInput, runStream } from '../testing.ts';
import type { Endpoint } from '../types.ts';
import { AZURE_DEFAULT_API_VERSION, azureAdaptor } from './adaptor.ts';

const azure = (partial: Parameters<typeof channel>[0] = {}) =>
  channel({ type: 3, key: 'az-key', baseUrl: 'https://res.openai.azure.com', ...partial });

describe('Azure buildRequest', () => {
  it('posts to the deployment named after the model without dots, with the default api-version', () => {
    const req = azureAdaptor.buildRequest(
      azure(),
      relayInput({ upstreamModel: 'gpt-3.5-turbo', stream: true }),
    );
    expect(AZURE_DEFAULT_API_VERSION).toBe('2024-12-01-preview');
    expect(req.url).toBe(
      'https://res.openai.azure.com/openai/deployments/gpt-35-turbo/chat/completions?api-version=2024-12-01-preview',
    );
    expect(Object.fromEntries(req.headers)).toEqual({
      'api-key': 'az-key',
      'content-type': 'application/json',
      accept: 'text/event-stream',
    });
    const body = JSON.parse(req.body as string);
    expect(body.model).toBe('gpt-3.5-turbo');
    expect(body.stream_options).toEqual({ include_usage: true });
  });

  it('takes api-version from channel.other and tolerates a trailing slash', () => {
    const req = azureAdaptor.buildRequest(
      azure({ baseUrl: 'https://res.openai.azure.com/', other: ' 2025-04-01-preview ' }),
      relayInput({ endpoint: 'embeddings', upstreamModel: 'text-embedding-3-small', body: {} }),
    );
    expect(req.url).toBe(
      'https://res.openai.azure.com/openai/deployments/text-embedding-3-small/embeddings?api-version=2025-04-01-preview',
    );
  });

  const tasks: [Endpoint, string][] = [
    ['completions', 'completions'],
    ['images', 'images/generations'],
    ['speech', 'audio/speech'],
    ['transcriptions', 'audio/transcriptions'],
    ['translations', 'audio/translations'],
  ];
  it.each(tasks)('%s uses task %s', (endpoint, task) => {
    const req = azureAdaptor.buildRequest(
      azure(),
      relayInput({ endpoint, upstreamModel: 'm-1.5', body: {} }),
    );
    expect(req.url).toBe(
      `https://res.openai.azure.com/openai/deployments/m-15/${task}?api-version=2024-12-01-preview`,
    );
  });

  it('reasoning models: the deployment is the model after the effort suffix moved into the body', () => {
    const req = azureAdaptor.buildRequest(
      azure(),
      relayInput({ upstreamModel: 'o3-mini-high', body: { max_tokens: 9, messages: [] } }),
    );
    expect(req.url).toContain('/openai/deployments/o3-mini/chat/completions?');
    expect(JSON.parse(req.body as string)).toEqual({
      model: 'o3-mini',
      reasoning_effort: 'high',
      max_completion_tokens: 9,
      messages: [],
    });
  });

  it('Responses API is not per deployment', () => {
    const req = azureAdaptor.buildRequest(
      azure({ other: '2025-03-01-preview' }),
      relayInput({ endpoint: 'responses', body: {} }),
    );
    expect(req.url).toBe('https://res.openai.azure.com/openai/responses?api-version=2025-03-01-preview');
  });

  it('requires a base URL and serves no moderations or rerank', () => {
    expect(() => azureAdaptor.buildRequest(azure({ baseUrl: '' }), relayInput())).toThrow(/base URL/);
    expect(azureAdaptor.supports('moderations')).toBe(false);
    expect(azureAdaptor.supports('rerank')).toBe(false);
    expect(azureAdaptor.supports('chat')).toBe(true);
    expect(azureAdaptor.balanceRequests).toBeUndefined();
  });
});

describe('Azure responses', () => {
  it('reuses the OpenAI response, error and stream handling', async () => {
    expect(azureAdaptor.parseResponse).toBe(openaiAdaptor.parseResponse);
    expect(azureAdaptor.parseError).toBe(openaiAdaptor.parseError);
    const body = new TextEncoder().encode(
      '{"choices":[{"message":{"content":"ok"}}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}',
    );
    const parsed = azureAdaptor.parseResponse(relayInput(), { status: 200, headers: new Headers(), body });
    expect(parsed.usage).toEqual(usage({ promptTokens: 3, completionTokens: 1 }));
    const { text } = await runStream(azureAdaptor.streamConversion(relayInput({ stream: true })), [
      new TextEncoder().encode('data: {"choices":[{"delta":{"content":"a"}}]}\n\n'),
    ]);
    expect(text).toBe('data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: [DONE]\n\n');
  });
});
