/**
 * OpenAI embeddings ↔ Gemini `:batchEmbedContents` (one request per input string). Gemini reports no token usage
 * for embeddings, so usage is null and core counts the input locally. `encoding_format: "base64"` (the OpenAI SDK
 * default) is honoured: little-endian float32, base64-encoded, as OpenAI sends it.
 */

import { isObject, type Obj } from '../json.ts';
import type { ParsedResponse, RelayInput } from '../types.ts';

export function embeddingInputs(body: Obj): string[] {
  const input = body.input;
  if (typeof input === 'string') return [input];
  return Array.isArray(input) ? input.filter((s): s is string => typeof s === 'string') : [];
}

export function buildEmbedBody(model: string, input: RelayInput): Obj {
  const body = input.body as Obj;
  const dims = typeof body.dimensions === 'number' ? { outputDimensionality: body.dimensions } : {};
  return {
    requests: embeddingInputs(body).map((text) => ({
      model: `models/${model}`,
      content: { parts: [{ text }] },
      ...dims,
    })),
  };
}

export function base64Floats(values: number[]): string {
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  for (const [i, v] of values.entries()) view.setFloat32(i * 4, v, true);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

export function parseEmbedResponse(input: RelayInput, body: Uint8Array): ParsedResponse {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(body));
  } catch {
    json = null;
  }
  const list = isObject(json) && Array.isArray(json.embeddings) ? json.embeddings : [];
  const base64 = (input.body as Obj).encoding_format === 'base64';
  const data = list.map((e, index) => {
    const values = isObject(e) && Array.isArray(e.values) ? (e.values as number[]) : [];
    return { object: 'embedding', index, embedding: base64 ? base64Floats(values) : values };
  });
  return {
    body: JSON.stringify({ object: 'list', data, model: input.upstreamModel }),
    contentType: 'application/json',
    usage: null,
    completionText: '',
  };
}

/**
 * Gemini-format embeddings on a Gemini channel (endpoint 'embed'): `:embedContent` or `:batchEmbedContents` as the
 * client called it (a body with `requests` is a batch), passed through with param_override merged and each
 * request's `model` set to the upstream model (Google refuses a batch whose requests name another model than the
 * URL). The answer passes through; Gemini reports no usage, so core counts the input.
 */
export function nativeEmbed(model: string, body: Obj, paramOverride: Obj): { method: string; body: string } {
  const name = `models/${model}`;
  const b: Obj = { ...body, ...paramOverride };
  if (Array.isArray(b.requests)) {
    // Not a field of BatchEmbedContentsRequest: the model travels in the URL and in each request.
    delete b.model;
    b.requests = b.requests.map((r) => (isObject(r) ? { ...r, model: name } : r));
    return { method: 'batchEmbedContents', body: JSON.stringify(b) };
  }
  b.model = name;
  return { method: 'embedContent', body: JSON.stringify(b) };
}

export function parseNativeEmbed(body: Uint8Array): ParsedResponse {
  return {
    body: body as Uint8Array<ArrayBuffer>,
    contentType: 'application/json',
    usage: null,
    completionText: '',
  };
}
