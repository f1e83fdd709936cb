/**
 * Images through the relay with the official `openai` SDK (issue 18): `/v1/images/edits` (multipart: image,
 * image[], mask, prompt, n, ...) passed to OpenAI and Azure channels, and gpt-image-1 billed by the usage the
 * upstream reports, for generations and edits alike: text input at ModelRatio, image input at ImageRatio, output
 * at CompletionRatio. Per-call priced models (ModelPrice) keep their fixed price per image.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_IMAGE_INPUT_TOKENS, type FakeOpenAI, startFakeOpenAI } from '../fakes/openai-upstream.ts';
import {
  lastLogOf,
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from './relay-stack.ts';

let stack: Stack;
let fake: FakeOpenAI;
let client: OpenAI;
let userId: number;
let tokenKey: string;

// A 1x1 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);
const png = (name = 'photo.png') => toFile(PNG, name, { type: 'image/png' });

const MODEL_RATIO = 2.5;
const COMPLETION_RATIO = 8;
const IMAGE_RATIO = 2;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  stack = await startStack({ suffix: 'relay_images' });
  const user = await seedUser(stack, { quota: 50_000_000 });
  userId = user.id;
  const token = await seedToken(stack, userId, { remainQuota: 20_000_000 });
  tokenKey = token.key;
  await seedChannel(stack, { type: 1, baseUrl: fake.url, models: ['gpt-image-1', 'dall-e-2', 'dall-e-3'] });
  await seedChannel(stack, {
    type: 3,
    baseUrl: fake.url,
    key: 'azure-image-key',
    other: '2025-04-01-preview',
    models: ['gpt-image-1-az'],
    modelMapping: { 'gpt-image-1-az': 'gpt-image-1' },
  });
  await setOptions(stack, {
    ModelRatio: JSON.stringify({ 'gpt-image-1': MODEL_RATIO, 'gpt-image-1-az': MODEL_RATIO }),
    CompletionRatio: JSON.stringify({ 'gpt-image-1': COMPLETION_RATIO, 'gpt-image-1-az': COMPLETION_RATIO }),
    ImageRatio: JSON.stringify({ 'gpt-image-1': IMAGE_RATIO, 'gpt-image-1-az': IMAGE_RATIO }),
    ModelPrice: JSON.stringify({ 'dall-e-2': 0.02, 'dall-e-3': 0.04 }),
  });
  client = new OpenAI({
    baseURL: `${stack.relays[0]!.httpUrl}/v1`,
    apiKey: `sk-${token.key}`,
    maxRetries: 0,
  });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await fake?.close();
});

const lastLog = (model: string) => lastLogOf(stack, userId, model);
const quotaOf = (text: number, image: number, output: number) =>
  Math.round((text + image * IMAGE_RATIO + output * COMPLETION_RATIO) * MODEL_RATIO);

describe('images through the relay', () => {
  it('generations: gpt-image-1 is billed by the reported tokens (issue: 10 in, 1,056 out logged as 3 and 0)', async () => {
    fake.on({
      path: '/v1/images/generations',
      respond: { usage: { prompt_tokens: 10, completion_tokens: 1056 } },
      times: 1,
    });
    const res = await client.images.generate({
      model: 'gpt-image-1',
      prompt: 'a red fox',
      quality: 'medium',
    });
    expect(res.data?.[0]?.b64_json).toBeTruthy();
    expect(res.usage).toMatchObject({ input_tokens: 10, output_tokens: 1056 });
    const log = await lastLog('gpt-image-1');
    expect(Number(log.prompt_tokens)).toBe(10);
    expect(Number(log.completion_tokens)).toBe(1056);
    expect(Number(log.quota)).toBe(quotaOf(10, 0, 1056));
    const other = JSON.parse(String(log.other));
    expect(other).toMatchObject({ model_ratio: 2.5, completion_ratio: 8, model_price: -1 });
    expect(other.usage_estimated).toBeUndefined();
  });

  it('edits: one image, multipart passed through, text and image input and output each at their ratio', async () => {
    const res = await client.images.edit({
      image: await png(),
      prompt: 'add a red hat',
      model: 'gpt-image-1',
      size: '1024x1024',
      quality: 'low',
    });
    expect(res.data?.[0]?.b64_json).toBeTruthy();
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/v1/images/edits');
    expect(sent.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(sent.headers.authorization).toBe('Bearer sk-upstream-key');
    expect(sent.form).toEqual({
      prompt: 'add a red hat',
      model: 'gpt-image-1',
      size: '1024x1024',
      quality: 'low',
    });
    expect(sent.files).toEqual([{ field: 'image', name: 'photo.png', size: PNG.length, type: 'image/png' }]);

    const log = await lastLog('gpt-image-1');
    expect(Number(log.prompt_tokens)).toBe(4 + FAKE_IMAGE_INPUT_TOKENS);
    expect(Number(log.completion_tokens)).toBe(100);
    expect(Number(log.quota)).toBe(quotaOf(4, FAKE_IMAGE_INPUT_TOKENS, 100));
    const other = JSON.parse(String(log.other));
    expect(other).toMatchObject({
      image: true,
      image_input: FAKE_IMAGE_INPUT_TOKENS,
      image_ratio: IMAGE_RATIO,
    });
    expect(log.content).toBe('model ratio 2.5, completion ratio 8, group ratio 1, image ratio 2');
  });

  it('edits: image[] with a mask and n=2', async () => {
    const res = await client.images.edit({
      image: [await png('a.png'), await png('b.png')],
      mask: await png('mask.png'),
      prompt: 'merge them',
      model: 'gpt-image-1',
      n: 2,
    });
    expect(res.data).toHaveLength(2);
    const sent = fake.requests.at(-1)!;
    expect(sent.files?.map((f) => `${f.field}:${f.name}`).sort()).toEqual([
      'image[]:a.png',
      'image[]:b.png',
      'mask:mask.png',
    ]);
    expect(sent.form?.n).toBe('2');
    const log = await lastLog('gpt-image-1');
    const image = 3 * FAKE_IMAGE_INPUT_TOKENS;
    expect(Number(log.prompt_tokens)).toBe(2 + image);
    expect(Number(log.completion_tokens)).toBe(200);
    expect(Number(log.quota)).toBe(quotaOf(2, image, 200));
  });

  it('edits on an Azure channel reach the deployment route with the api-key header', async () => {
    await client.images.edit({ image: await png(), prompt: 'add a red hat', model: 'gpt-image-1-az' });
    const sent = fake.requests.at(-1)!;
    expect(sent.api).toBe('azure');
    expect(sent.path).toBe('/openai/deployments/gpt-image-1/images/edits');
    expect(sent.query['api-version']).toBe('2025-04-01-preview');
    expect(sent.headers['api-key']).toBe('azure-image-key');
    const log = await lastLog('gpt-image-1-az');
    expect(Number(log.prompt_tokens)).toBe(4 + FAKE_IMAGE_INPUT_TOKENS);
    expect(Number(log.quota)).toBe(quotaOf(4, FAKE_IMAGE_INPUT_TOKENS, 100));
  });

  it('per-call priced models keep their fixed price per image, for edits and generations', async () => {
    const edit = await client.images.edit({ image: await png(), prompt: 'a hat', model: 'dall-e-2', n: 2 });
    expect(edit.data).toHaveLength(2);
    // 0.02 USD · 500000 · 2 images
    expect(Number((await lastLog('dall-e-2')).quota)).toBe(20_000);
    await client.images.generate({ model: 'dall-e-3', prompt: 'a cat', response_format: 'b64_json' });
    expect(Number((await lastLog('dall-e-3')).quota)).toBe(20_000);
  });

  it('an edit the upstream refuses reaches the client as its 400 in OpenAI envelope', async () => {
    const form = new FormData();
    form.set('model', 'gpt-image-1');
    form.set('prompt', 'no image here');
    const res = await fetch(`${stack.relays[0]!.httpUrl}/v1/images/edits`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${tokenKey}` },
      body: form,
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string; type: string } };
    expect(body.error.message).toContain("Missing required parameter: 'image'.");
    expect(body.error.type).toBe('invalid_request_error');
  });

  it('a JSON body on /v1/images/edits is a 400, not a crash', async () => {
    const res = await fetch(`${stack.relays[0]!.httpUrl}/v1/images/edits`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${tokenKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-image-1', prompt: 'x' }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe(
      'expected a multipart/form-data body',
    );
  });
});
