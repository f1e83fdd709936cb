/**
 * The JSON types of the request fields the relay and its adaptors read, checked at the front before anything is
 * reserved or sent upstream (issue 13, item 7). new-api binds each body into a Go struct, so a field of the wrong
 * type is a 400 there; here it is the same 400 in the route's envelope, instead of a hold computed from garbage
 * (`n: 2^40` answered 503 store_unavailable) or an upstream that chokes on it (answered 5xx). Only types and the
 * count `n` are checked: fields the relay does not know pass through untouched, and token limits stay the hold
 * code's business.
 */
import { z } from 'zod';
import { RelayError } from '../core/errors.ts';
import { MAX_OUTPUTS } from '../core/hold.ts';
import type { Endpoint } from '../providers/types.ts';

/** OpenAI's own ceiling for `n` on chat (images allow 10; the upstream refuses between the two): the hold's. */
const MAX_N = MAX_OUTPUTS;

const text = z.string();
const number = z.number();
const count = z.number().int().min(1).max(MAX_N);
const bool = z.boolean();
const list = z.array(z.unknown());
const object = z.record(z.string(), z.unknown());
const textOrList = z.union([text, list]);
const optional = <T extends z.ZodType>(t: T) => t.nullish();

const common = {
  model: optional(text),
  stream: optional(bool),
  user: optional(text),
};

const SHAPES: Partial<Record<Endpoint, z.ZodType>> = {
  chat: z.looseObject({
    ...common,
    messages: optional(list),
    n: optional(count),
    max_tokens: optional(number),
    max_completion_tokens: optional(number),
    temperature: optional(number),
    top_p: optional(number),
    presence_penalty: optional(number),
    frequency_penalty: optional(number),
    seed: optional(number),
    stop: optional(textOrList),
    tools: optional(list),
    stream_options: optional(object),
    response_format: optional(object),
  }),
  completions: z.looseObject({
    ...common,
    prompt: optional(textOrList),
    n: optional(count),
    max_tokens: optional(number),
    temperature: optional(number),
    stop: optional(textOrList),
  }),
  embeddings: z.looseObject({
    ...common,
    input: optional(textOrList),
    dimensions: optional(number),
    encoding_format: optional(text),
  }),
  images: z.looseObject({
    ...common,
    prompt: optional(text),
    n: optional(count),
    size: optional(text),
    quality: optional(text),
    style: optional(text),
    response_format: optional(text),
  }),
  speech: z.looseObject({
    ...common,
    input: optional(text),
    voice: optional(text),
    speed: optional(number),
    response_format: optional(text),
  }),
  moderations: z.looseObject({ ...common, input: optional(z.union([text, list])) }),
  rerank: z.looseObject({
    ...common,
    query: optional(z.union([text, object])),
    documents: optional(list),
    top_n: optional(z.number().int().min(0)),
    return_documents: optional(bool),
  }),
  responses: z.looseObject({
    ...common,
    input: optional(textOrList),
    instructions: optional(text),
    max_output_tokens: optional(number),
    temperature: optional(number),
    tools: optional(list),
  }),
  messages: z.looseObject({
    ...common,
    messages: list,
    system: optional(textOrList),
    max_tokens: number,
    temperature: optional(number),
    tools: optional(list),
  }),
  generate: z.looseObject({
    contents: list,
    systemInstruction: optional(z.union([text, object])),
    generationConfig: optional(object),
    tools: optional(list),
    safetySettings: optional(list),
  }),
};

/**
 * Throws a 400 RelayError naming the first field of the wrong type (or an `n` out of 1..MAX_N). Multipart bodies
 * (audio) are checked by the adaptor that reads them.
 */
export function checkShape(endpoint: Endpoint, body: Record<string, unknown>): void {
  const shape = SHAPES[endpoint];
  if (!shape) return;
  const result = shape.safeParse(body);
  if (result.success) return;
  const issue = result.error.issues[0]!;
  const param = issue.path.map(String).join('.');
  const message =
    param === 'n' || param.endsWith('.n')
      ? `n must be an integer from 1 to ${MAX_N}`
      : `invalid value for '${param}': ${issue.code === 'invalid_type' ? `expected ${issue.expected}` : issue.message}`;
  throw new RelayError({ status: 400, message, type: 'invalid_request_error', param: param || null });
}
