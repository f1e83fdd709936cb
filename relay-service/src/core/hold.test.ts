import {
  defaultOptionValues,
  type OptionKey,
  type OptionValue,
  type OptionValues,
} from '@switchyard/db/options/registry.ts';
import { describe, expect, it } from 'vitest';
import { RelayError } from './errors.ts';
import {
  AUDIO_BYTES_PER_TOKEN,
  IMAGE_HOLD_TOKENS,
  MAX_OUTPUT_TOKENS,
  mediaBound,
  OPAQUE_PART_HOLD_TOKENS,
  OUTPUT_CEILING_TOKENS,
  requestHold,
} from './hold.ts';
import {
  computeQuota,
  estimateQuota,
  type Price,
  type PriceTables,
  priceTablesFrom,
  resolvePrice,
} from './pricing.ts';
import { countPromptTokens, IMAGE_TOKENS_HIGH } from './tokenize.ts';
import { usage } from './usage.ts';

function tables(overrides: Partial<OptionValues> = {}): PriceTables {
  const values = { ...defaultOptionValues(), ...overrides };
  return priceTablesFrom({ get: <K extends OptionKey>(k: K): OptionValue<K> => values[k] as OptionValue<K> });
}
const T = tables({
  ModelRatio: { 'gpt-4o': 1.25, 'claude-x': 1.5, 'gemini-x': 0.625, 'audio-x': 1.25 },
  CompletionRatio: { 'gpt-4o': 4, 'claude-x': 5, 'gemini-x': 8, 'audio-x': 4 },
  CreateCacheRatio: { 'claude-x': 1.25 },
  CacheRatio: { 'gpt-4o': 0.5 },
  AudioRatio: { 'audio-x': 16 },
  AudioCompletionRatio: { 'audio-x': 2 },
  GroupRatio: { default: 1 },
  PreConsumedQuota: 500,
});
const price = (model: string): Price => resolvePrice(T, model, 'default')!;

/** A small base64 PDF-like file (what the hostile test sent: a few hundred bytes). */
const FILE_DATA = `data:application/pdf;base64,${Buffer.from('%PDF-1.4 tiny').toString('base64')}`;
const AUDIO_64K = Buffer.alloc(64 * 1024).toString('base64');

async function hold(
  endpoint: Parameters<typeof requestHold>[0],
  body: Record<string, unknown>,
  model = 'gpt-4o',
) {
  return requestHold(endpoint, body, model, T.preConsumedQuota);
}

describe('mediaBound: every part the relay accepts, in every format', () => {
  const audioTokens = Math.ceil((64 * 1024) / AUDIO_BYTES_PER_TOKEN);
  it.each<[string, Parameters<typeof mediaBound>[0], Record<string, unknown>, number, number]>([
    [
      'chat file',
      'chat',
      { messages: [{ role: 'user', content: [{ type: 'file', file: { file_data: FILE_DATA } }] }] },
      OPAQUE_PART_HOLD_TOKENS,
      0,
    ],
    [
      'chat file by id',
      'chat',
      { messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'f1' } }] }] },
      OPAQUE_PART_HOLD_TOKENS,
      0,
    ],
    [
      'chat image',
      'chat',
      {
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/a.png' } }] }],
      },
      IMAGE_HOLD_TOKENS,
      0,
    ],
    [
      'chat audio',
      'chat',
      {
        messages: [
          {
            role: 'user',
            content: [{ type: 'input_audio', input_audio: { data: AUDIO_64K, format: 'wav' } }],
          },
        ],
      },
      0,
      audioTokens,
    ],
    [
      'responses input_file',
      'responses',
      { input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'https://x/a.pdf' }] }] },
      OPAQUE_PART_HOLD_TOKENS,
      0,
    ],
    [
      'responses input_image',
      'responses',
      { input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://x/a.png' }] }] },
      IMAGE_HOLD_TOKENS,
      0,
    ],
    [
      'responses input_audio',
      'responses',
      { input: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: AUDIO_64K } }] }] },
      0,
      audioTokens,
    ],
    [
      'responses stored conversation',
      'responses',
      { previous_response_id: 'resp_1', input: 'go on' },
      OPAQUE_PART_HOLD_TOKENS,
      0,
    ],
    [
      'responses item_reference',
      'responses',
      { input: [{ type: 'item_reference', id: 'msg_1' }] },
      OPAQUE_PART_HOLD_TOKENS,
      0,
    ],
    [
      'claude document',
      'messages',
      {
        messages: [
          {
            role: 'user',
            content: [
              {
                type: 'document',
                source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' },
              },
            ],
          },
        ],
      },
      OPAQUE_PART_HOLD_TOKENS,
      0,
    ],
    [
      'claude image',
      'messages',
      {
        messages: [
          { role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://x/a.png' } }] },
        ],
      },
      IMAGE_HOLD_TOKENS,
      0,
    ],
    [
      'gemini inline image',
      'generate',
      { contents: [{ parts: [{ inline_data: { mime_type: 'image/png', data: 'iVBO' } }] }] },
      IMAGE_HOLD_TOKENS,
      0,
    ],
    [
      'gemini inline pdf',
      'generate',
      { contents: [{ parts: [{ inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } }] }] },
      OPAQUE_PART_HOLD_TOKENS,
      0,
    ],
    [
      'gemini inline audio',
      'generate',
      { contents: [{ parts: [{ inlineData: { mimeType: 'audio/mp3', data: AUDIO_64K } }] }] },
      0,
      audioTokens,
    ],
    [
      'gemini file_data video',
      'generate',
      { contents: [{ parts: [{ file_data: { mime_type: 'video/mp4', file_uri: 'gs://x' } }] }] },
      OPAQUE_PART_HOLD_TOKENS,
      0,
    ],
    ['text only', 'chat', { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] }, 0, 0],
  ])('%s', (_name, endpoint, body, tokens, audio) => {
    expect(mediaBound(endpoint, body)).toEqual({ tokens, audioTokens: audio });
  });

  it('multipart: audio files by size, image files at the image ceiling', () => {
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(3200)]), 'a.mp3');
    expect(mediaBound('transcriptions', form)).toEqual({ tokens: 0, audioTokens: 160 });
    const edit = new FormData();
    edit.append('image', new Blob([new Uint8Array(10)]), 'a.png');
    edit.append('image', new Blob([new Uint8Array(10)]), 'b.png');
    expect(mediaBound('images', edit)).toEqual({ tokens: 2 * IMAGE_HOLD_TOKENS, audioTokens: 0 });
    expect(mediaBound('imageEdits', edit)).toEqual({ tokens: 2 * IMAGE_HOLD_TOKENS, audioTokens: 0 });
  });

  it('an image edit holds its prompt, every image and mask at the image ceiling and n outputs', async () => {
    const form = new FormData();
    form.append('image[]', new Blob([new Uint8Array(10)]), 'a.png');
    form.append('image[]', new Blob([new Uint8Array(10)]), 'b.png');
    form.append('mask', new Blob([new Uint8Array(10)]), 'm.png');
    form.append('prompt', 'add a red hat');
    form.append('n', '2');
    const h = await requestHold('imageEdits', form, 'gpt-image-1', T.preConsumedQuota);
    // The prompt is local usage when the upstream reports none (as for generations).
    expect(h.promptTokens).toBeGreaterThan(0);
    expect(h.estimate).toMatchObject({
      promptTokens: h.promptTokens + 3 * IMAGE_HOLD_TOKENS,
      outputs: 2,
      calls: 2,
    });
  });

  it('a deeply nested body is walked without recursion', () => {
    let deep: unknown = { type: 'file' };
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(mediaBound('chat', { messages: deep as unknown[] }).tokens).toBe(OPAQUE_PART_HOLD_TOKENS);
  });
});

describe('requestHold + estimateQuota: an upper bound of the cost for every shape', () => {
  it('the issue 13 call: a small file part and max_tokens 5 now holds the file ceiling', async () => {
    const body = {
      model: 'gpt-4o',
      max_tokens: 5,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'summarise' },
            { type: 'file', file: { file_data: FILE_DATA } },
          ],
        },
      ],
    };
    const h = await hold('chat', body);
    // The prompt estimate for local usage is unchanged (text and overheads only).
    expect(h.promptTokens).toBe(await countPromptTokens('chat', body, 'gpt-4o'));
    expect(h.estimate).toMatchObject({
      promptTokens: h.promptTokens + OPAQUE_PART_HOLD_TOKENS,
      maxTokens: 5,
      outputs: 1,
    });
    const q = estimateQuota(price('gpt-4o'), h.estimate, T);
    // (prompt + 200000 + 5·4)·1.25, rounded up
    expect(q).toBe(Math.ceil((h.promptTokens + OPAQUE_PART_HOLD_TOKENS + 20) * 1.25));
    // An upstream billing a 100-page PDF (100 pages at 1,500 tokens) is within the hold.
    const cost = computeQuota(price('gpt-4o'), usage({ promptTokens: 150_000, completionTokens: 5 }), T);
    expect(cost).toBeLessThanOrEqual(q);
  });

  it('images are held at the ceiling, not at the flat 765 estimate', async () => {
    const body = {
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/a.png' } }] }],
      max_tokens: 1,
    };
    const h = await hold('chat', body);
    expect(h.promptTokens).toBe(3 + 1 + IMAGE_TOKENS_HIGH + 3);
    expect(h.estimate.promptTokens).toBe(3 + 1 + IMAGE_HOLD_TOKENS + 3);
  });

  it('n, best_of and candidateCount multiply the output allowance', async () => {
    const chat = await hold('chat', { messages: [{ role: 'user', content: 'hi' }], max_tokens: 10, n: 4 });
    expect(chat.estimate).toMatchObject({ maxTokens: 10, outputs: 4 });
    const completions = await hold('completions', { prompt: 'hi', max_tokens: 10, n: 2, best_of: 5 });
    expect(completions.estimate.outputs).toBe(5);
    const gemini = await hold(
      'generate',
      {
        contents: [{ parts: [{ text: 'hi' }] }],
        generationConfig: { maxOutputTokens: 7, candidateCount: 3 },
      },
      'gemini-x',
    );
    expect(gemini.estimate).toMatchObject({ maxTokens: 7, outputs: 3 });
    // (prompt + 3·7·8)·0.625
    expect(estimateQuota(price('gemini-x'), gemini.estimate, T)).toBe(
      Math.ceil((gemini.estimate.promptTokens + 168) * 0.625),
    );
  });

  it('Responses max_output_tokens and tools; Claude thinking stays inside max_tokens', async () => {
    const tools = [{ type: 'function', name: 'f', parameters: { type: 'object' } }];
    const r = await hold('responses', { input: 'hi', max_output_tokens: 9, tools });
    const bare = await hold('responses', { input: 'hi', max_output_tokens: 9 });
    expect(r.estimate.maxTokens).toBe(9);
    expect(r.estimate.promptTokens).toBeGreaterThan(bare.estimate.promptTokens);
    const claude = await hold(
      'messages',
      {
        max_tokens: 2048,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [{ role: 'user', content: 'hi' }],
      },
      'claude-x',
    );
    expect(claude.estimate).toMatchObject({ maxTokens: 2048, outputs: 1 });
    // Claude's cache writes (1.25) are the dearest prompt tokens: the prompt is held at that rate.
    expect(estimateQuota(price('claude-x'), claude.estimate, T)).toBe(
      Math.ceil((claude.estimate.promptTokens * 1.25 + 2048 * 5) * 1.5),
    );
  });

  it('without an output limit: OUTPUT_CEILING_TOKENS per output (PreConsumedQuota only for embeddings etc.)', async () => {
    const h = await hold('chat', { messages: [{ role: 'user', content: 'hi' }] });
    expect(h.estimate.maxTokens).toBeUndefined();
    expect(h.estimate.defaultMaxTokens).toBe(OUTPUT_CEILING_TOKENS);
    expect(estimateQuota(price('gpt-4o'), h.estimate, T)).toBe(
      Math.ceil((h.estimate.promptTokens + OUTPUT_CEILING_TOKENS * 4) * 1.25),
    );
    expect((await hold('embeddings', { input: 'hi' })).estimate.defaultMaxTokens).toBe(500);
  });

  it('audio in at the audio rate, audio out at audio × audio completion', async () => {
    const body = {
      modalities: ['text', 'audio'],
      max_tokens: 100,
      messages: [
        { role: 'user', content: [{ type: 'input_audio', input_audio: { data: AUDIO_64K, format: 'wav' } }] },
      ],
    };
    const h = await hold('chat', body, 'audio-x');
    const audioIn = Math.ceil((64 * 1024) / AUDIO_BYTES_PER_TOKEN);
    expect(h.estimate.audioPromptTokens).toBe(audioIn);
    const q = estimateQuota(price('audio-x'), h.estimate, T);
    expect(q).toBe(Math.ceil((h.estimate.promptTokens + audioIn * 16 + 100 * 16 * 2) * 1.25));
    // 64 KiB of 6 kbit/s Opus is 87 s: 2,796 tokens at Gemini's 32 tokens/s; all the output audio.
    const cost = computeQuota(
      price('audio-x'),
      usage({
        promptTokens: 2796,
        audioPromptTokens: 2796,
        completionTokens: 100,
        audioCompletionTokens: 100,
      }),
      T,
    );
    expect(cost).toBeLessThanOrEqual(q);
  });

  it('an absurd max_tokens or n is a 400 (not a 503 from the store); the hold stays a safe integer', async () => {
    for (const body of [
      { messages: [], max_tokens: 1e308 },
      { messages: [], max_completion_tokens: MAX_OUTPUT_TOKENS + 1 },
      { input: 'x', max_output_tokens: 1e20 },
      { contents: [], generationConfig: { maxOutputTokens: 1e308 } },
      { messages: [], n: 1e9 },
    ]) {
      const err = await hold('chat', body).catch((e: unknown) => e);
      expect(err, JSON.stringify(body)).toBeInstanceOf(RelayError);
      expect((err as RelayError).status).toBe(400);
      expect((err as RelayError).type).toBe('invalid_request_error');
    }
    const h = await hold('chat', { messages: [], max_tokens: MAX_OUTPUT_TOKENS, n: 128 });
    const huge = tables({
      ModelRatio: { m: 1e6 },
      CompletionRatio: { m: 1e6 },
      GroupRatio: { default: 1e3 },
    });
    const q = estimateQuota(resolvePrice(huge, 'm', 'default')!, h.estimate, huge);
    expect(q).toBe(Number.MAX_SAFE_INTEGER);
    expect(Number.isSafeInteger(q)).toBe(true);
  });
});
