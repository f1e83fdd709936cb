/**
 * AI Proxy Library (channel type 21): aiproxy.io's knowledge-base question answering
 * (https://docs.aiproxy.io/dev/library), `POST {base}/api/library/ask` with `Authorization: Bearer <key>` and
 * `{model, query, libraryId, stream}`. The query is the last message's text and the library id comes from the
 * channel's `other` field (one-api's LibraryID). Answers are `{success, answer, documents:[{title, url}], errCode,
 * message}`, a failure arriving inside a 200 (UpstreamFailure); streams are SSE frames `{content, documents,
 * finish, model}`. The documents the answer cites are appended as a numbered Markdown list of links, as one-api
 * does. No usage is reported: core counts locally. Balance: aiproxy.io's user overview (`Api-Key` header,
 * `data.totalPoints`).
 */

import type { FrameSink, FrameTransformer } from '../frames.ts';
import { isObject, num, type Obj, str } from '../json.ts';
import { parseOpenAIError } from '../openai/response.ts';
import { chatTexts, completionChunk, DONE_FRAME, sseFrame } from '../plain-chat.ts';
import { SseDecoder } from '../sse.ts';
import type {
  ChannelConfig,
  Endpoint,
  ParsedResponse,
  RelayInput,
  StreamConversion,
  SyncProviderAdaptor,
  UpstreamError,
  UpstreamRequest,
} from '../types.ts';
import { UpstreamFailure } from '../types.ts';

export const AIPROXY_CHANNEL_TYPE = 21;
export const AIPROXY_DEFAULT_BASE = 'https://api.aiproxy.io';
/** The account overview lives on the web host, not the API host. */
export const AIPROXY_BALANCE_URL = 'https://aiproxy.io/api/report/getUserOverview';
const SUPPORTED: ReadonlySet<Endpoint> = new Set(['chat']);

export type LibraryDocument = { title: string; url: string };

function documentsOf(v: unknown): LibraryDocument[] {
  return Array.isArray(v) ? v.filter(isObject).map((d) => ({ title: str(d.title), url: str(d.url) })) : [];
}

/** The reference list appended to an answer ("参考文档" = reference documents, the heading one-api uses). */
export function documentsMarkdown(docs: readonly LibraryDocument[]): string {
  if (docs.length === 0) return '';
  return `\n\n参考文档：\n${docs.map((d, i) => `${i + 1}. [${d.title}](${d.url})\n`).join('')}`;
}

function parseJson(body: Uint8Array | string): Obj {
  try {
    const v = JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body));
    return isObject(v) ? v : {};
  } catch {
    return {};
  }
}

/** An error carried in a library reply: errCode ≠ 0 or success false. */
function libraryError(res: Obj, status: number): UpstreamError | null {
  const code = num(res.errCode) || num(res.error_code);
  if (code === 0 && res.success !== false) return null;
  return {
    status,
    message: str(res.message) || str(res.errMsg) || `AI Proxy library error ${code}`,
    type: 'upstream_error',
    code: code ? String(code) : null,
  };
}

function libraryId(channel: ChannelConfig): string {
  const id = channel.other.trim();
  if (!id)
    throw new Error('AI Proxy Library channel has no library id: set it in the channel\'s "other" field');
  return id;
}

function buildAsk(channel: ChannelConfig, input: RelayInput): UpstreamRequest {
  const messages = chatTexts(input);
  const headers = new Headers({ 'content-type': 'application/json', authorization: `Bearer ${channel.key}` });
  if (input.stream) headers.set('accept', 'text/event-stream');
  return {
    url: `${channel.baseUrl || AIPROXY_DEFAULT_BASE}/api/library/ask`,
    method: 'POST',
    headers,
    body: JSON.stringify({
      model: input.upstreamModel,
      query: messages.at(-1)?.text ?? '',
      libraryId: libraryId(channel),
      stream: input.stream,
      ...channel.paramOverride,
    }),
  };
}

const completionId = (created: number) => `chatcmpl-aiproxy-${created}`;

function parseAnswer(input: RelayInput, body: Uint8Array, now: () => number): ParsedResponse {
  const res = parseJson(body);
  const err = libraryError(res, 500);
  if (err) throw new UpstreamFailure(err);
  const content = str(res.answer) + documentsMarkdown(documentsOf(res.documents));
  const created = Math.floor(now() / 1000);
  return {
    body: JSON.stringify({
      id: completionId(created),
      object: 'chat.completion',
      created,
      model: input.upstreamModel,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }],
    }),
    contentType: 'application/json',
    usage: null,
    completionText: content,
  };
}

function streamConversion(input: RelayInput, now: () => number): StreamConversion {
  const decoder = new SseDecoder();
  const created = Math.floor(now() / 1000);
  const id = completionId(created);
  let model = input.upstreamModel;
  let documents: LibraryDocument[] = [];
  let text = '';
  let sawFirstToken = false;
  let started = false;
  let failed = false;

  const handle = (out: FrameSink, events: ReturnType<SseDecoder['push']>) => {
    for (const ev of events) {
      if (failed) return;
      const data = parseJson(ev.data);
      if (Object.keys(data).length === 0) continue;
      const err = libraryError(data, 500);
      if (err) {
        failed = true;
        out.enqueue(sseFrame({ error: { message: err.message, type: err.type, code: err.code } }));
        continue;
      }
      if (str(data.model)) model = str(data.model);
      const docs = documentsOf(data.documents);
      if (docs.length) documents = docs;
      const content = str(data.content);
      if (content === '' && started) continue;
      const delta: Obj = started ? { content } : { role: 'assistant', content };
      started = true;
      if (content) {
        text += content;
        sawFirstToken = true;
      }
      out.enqueue(sseFrame(completionChunk(id, created, model, delta)));
    }
  };

  const transformer: FrameTransformer = {
    transform(bytes, out) {
      handle(out, decoder.push(bytes));
    },
    flush(out) {
      handle(out, decoder.end());
      if (!failed) {
        const refs = documentsMarkdown(documents);
        text += refs;
        out.enqueue(sseFrame(completionChunk(id, created, model, refs ? { content: refs } : {}, 'stop')));
      }
      out.enqueue(DONE_FRAME);
    },
  };
  return { transformer, tally: () => ({ usage: null, completionText: text, sawFirstToken }) };
}

/** The balance host: aiproxy.io for the official API, the channel's own base for a self-hosted or test one. */
function balanceUrl(channel: ChannelConfig): string {
  const base = channel.baseUrl;
  if (!base || /^https:\/\/(api\.)?aiproxy\.io$/.test(base)) return AIPROXY_BALANCE_URL;
  return `${base}/api/report/getUserOverview`;
}

export function createAIProxyAdaptor(now: () => number = Date.now): SyncProviderAdaptor {
  return {
    id: 'aiproxy',
    channelTypes: [AIPROXY_CHANNEL_TYPE],
    supports: (endpoint) => SUPPORTED.has(endpoint),
    buildRequest: buildAsk,
    parseResponse: (input, res) => parseAnswer(input, res.body, now),
    streamConversion: (input) => streamConversion(input, now),
    parseError(res): UpstreamError {
      const err = libraryError(parseJson(res.bodyText), res.status);
      return err ?? parseOpenAIError(res);
    },
    balanceRequests: (channel) => [
      {
        url: balanceUrl(channel),
        method: 'GET',
        headers: new Headers({ 'Api-Key': channel.key }),
        body: null,
      },
    ],
    parseBalance(bodies): number {
      const res = isObject(bodies[0]) ? bodies[0] : {};
      if (res.success !== true)
        throw new Error(
          `code: ${num(res.error_code)}, message: ${str(res.message) || 'no balance in the reply'}`,
        );
      const data = isObject(res.data) ? res.data : {};
      if (typeof data.totalPoints !== 'number') throw new Error('no data.totalPoints in the reply');
      return data.totalPoints;
    },
  };
}

export const aiproxyAdaptor: SyncProviderAdaptor = createAIProxyAdaptor();
