import { describe, expect, it } from 'vitest';
import { createGeminiAdaptor } from '../gemini/adaptor.ts';
import { channel, relayInput } from '../testing.ts';
import { geminiEmbedTexts, geminiEmbedToOpenAI, openAIToGeminiEmbed } from './gemini-embed.ts';

const single = { content: { parts: [{ text: 'a' }, { text: 'b' }] }, taskType: 'RETRIEVAL_DOCUMENT' };
const batch = {
  requests: [
    { model: 'models/x', content: { parts: [{ text: 'one' }] }, outputDimensionality: 3 },
    { model: 'models/x', content: { parts: [{ text: 'two' }] }, outputDimensionality: 3 },
  ],
};

describe('Gemini embeddings ↔ OpenAI embeddings bridge', () => {
  it('one input per content (parts joined), outputDimensionality → dimensions', () => {
    expect(geminiEmbedTexts(single)).toEqual(['a\nb']);
    expect(geminiEmbedToOpenAI(single)).toEqual({ input: ['a\nb'] });
    expect(geminiEmbedToOpenAI(batch)).toEqual({ input: ['one', 'two'], dimensions: 3 });
  });

  it('the OpenAI answer back as {embedding} or {embeddings}, in index order, floats or base64', () => {
    const b64 = Buffer.from(new Float32Array([0.5, -1]).buffer).toString('base64');
    const answer = JSON.stringify({
      object: 'list',
      data: [
        { object: 'embedding', index: 1, embedding: b64 },
        { object: 'embedding', index: 0, embedding: [0.25, 0.75] },
      ],
      usage: { prompt_tokens: 2, total_tokens: 2 },
    });
    expect(JSON.parse(openAIToGeminiEmbed(answer, 'm', batch))).toEqual({
      embeddings: [{ values: [0.25, 0.75] }, { values: [0.5, -1] }],
    });
    expect(JSON.parse(openAIToGeminiEmbed(answer, 'm', single))).toEqual({
      embedding: { values: [0.25, 0.75] },
    });
  });
});

describe('Gemini adaptor, native embed', () => {
  const adaptor = createGeminiAdaptor(() => 0);
  const ch = channel({ type: 24, key: 'AIza', baseUrl: 'https://g.example', paramOverride: {} });
  it(':batchEmbedContents for a batch (each request renamed to the upstream model, no top-level model)', () => {
    const req = adaptor.buildRequest(
      ch,
      relayInput({
        endpoint: 'embed',
        upstreamModel: 'gemini-embedding-001',
        body: { ...batch, model: 'alias' },
      }),
    );
    expect(req.url).toBe('https://g.example/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(req.headers.get('x-goog-api-key')).toBe('AIza');
    const body = JSON.parse(req.body as string);
    expect(body.model).toBeUndefined();
    expect(body.requests.map((r: { model: string }) => r.model)).toEqual([
      'models/gemini-embedding-001',
      'models/gemini-embedding-001',
    ]);
  });

  it(':embedContent for one content; the answer passes through with no usage (counted by core)', () => {
    const req = adaptor.buildRequest(
      ch,
      relayInput({
        endpoint: 'embed',
        upstreamModel: 'gemini-embedding-001',
        body: { ...single, model: 'alias' },
      }),
    );
    expect(req.url).toBe('https://g.example/v1beta/models/gemini-embedding-001:embedContent');
    expect(JSON.parse(req.body as string)).toEqual({ ...single, model: 'models/gemini-embedding-001' });
    const raw = new TextEncoder().encode('{"embedding":{"values":[0.1,0.2]}}');
    const parsed = adaptor.parseResponse(relayInput({ endpoint: 'embed' }), {
      status: 200,
      headers: new Headers(),
      body: raw,
    });
    expect(parsed.usage).toBeNull();
    expect(new TextDecoder().decode(parsed.body as Uint8Array)).toBe('{"embedding":{"values":[0.1,0.2]}}');
  });
});
