/**
 * Gemini's embedding calls (https://ai.google.dev/api/embeddings) ↔ OpenAI embeddings, for Gemini-format clients
 * on channels that serve only OpenAI's `/v1/embeddings`. `:embedContent` takes one `{content, taskType?, title?,
 * outputDimensionality?}` and answers `{embedding: {values}}`; `:batchEmbedContents` takes `{requests: [...]}` of
 * the same and answers `{embeddings: [{values}, ...]}` in order. Each content is one input (its text parts joined
 * by a newline); outputDimensionality becomes `dimensions`. taskType and title have no OpenAI equivalent.
 */
import { isObject, type Obj, str } from '../json.ts';

/** True for a batchEmbedContents body. */
export const isBatchEmbed = (body: Obj): boolean => Array.isArray(body.requests);

/** The single request, or each request of a batch. */
export function embedRequests(body: Obj): Obj[] {
  return isBatchEmbed(body) ? (body.requests as unknown[]).filter(isObject) : [body];
}

/** The text of each content, in order (one per embedding asked for). */
export function geminiEmbedTexts(body: Obj): string[] {
  return embedRequests(body).map((r) => {
    const content = isObject(r.content) ? r.content : {};
    const parts = Array.isArray(content.parts) ? content.parts : [];
    return parts.map((p) => (isObject(p) ? str(p.text) : '')).join('\n');
  });
}

/** The OpenAI embeddings request (core sets `model`). */
export function geminiEmbedToOpenAI(body: Obj): Obj {
  const dims = embedRequests(body).find(
    (r) => typeof r.outputDimensionality === 'number',
  )?.outputDimensionality;
  return { input: geminiEmbedTexts(body), ...(typeof dims === 'number' ? { dimensions: dims } : {}) };
}

/** base64 little-endian float32 (OpenAI's `encoding_format: "base64"`) → numbers. */
function floatsOf(embedding: unknown): number[] {
  if (Array.isArray(embedding)) return embedding.filter((v): v is number => typeof v === 'number');
  if (typeof embedding !== 'string') return [];
  const bin = atob(embedding);
  const view = new DataView(new ArrayBuffer(bin.length));
  for (let i = 0; i < bin.length; i++) view.setUint8(i, bin.charCodeAt(i));
  return Array.from({ length: Math.floor(bin.length / 4) }, (_, i) => view.getFloat32(i * 4, true));
}

/** The OpenAI answer → Gemini's, single or batch as the client asked. */
export function openAIToGeminiEmbed(openaiJson: string, _model: string, request: Obj): string {
  let json: unknown;
  try {
    json = JSON.parse(openaiJson);
  } catch {
    json = null;
  }
  const data = isObject(json) && Array.isArray(json.data) ? json.data.filter(isObject) : [];
  const ordered = [...data].sort(
    (a, b) => (typeof a.index === 'number' ? a.index : 0) - (typeof b.index === 'number' ? b.index : 0),
  );
  const list = ordered.map((d) => ({ values: floatsOf(d.embedding) }));
  return JSON.stringify(
    isBatchEmbed(request) ? { embeddings: list } : { embedding: list[0] ?? { values: [] } },
  );
}
