/**
 * AWS Bedrock Claude (channel type 33). The key is `AccessKeyId|SecretAccessKey|Region` (seed 001 §5), or
 * `BedrockApiKey|Region` for Bedrock API keys (sent as a Bearer token, as new-api accepts). Calls go to Bedrock
 * Runtime's InvokeModel (`POST /model/{modelId}/invoke`) and InvokeModelWithResponseStream
 * (`/invoke-with-response-stream`) on `https://bedrock-runtime.{region}.amazonaws.com` (the channel's base URL
 * replaces that origin), signed with SigV4 for the service `bedrock` by AWS's own signer.
 *
 * The body is Anthropic's Messages request without `model` (the model travels in the path) and `stream` (the
 * operation decides), with `anthropic_version: bedrock-2023-05-31` and the client's `anthropic-beta` flags as
 * `anthropic_beta` (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html).
 * The answer is an Anthropic message; the stream carries Claude's events inside event-stream messages
 * (eventstream.ts). Both are read by the anthropic adaptor's transforms: OpenAI chat clients get a chat
 * completion, Claude clients on /v1/messages get Claude's own answer and events (native passthrough).
 * Bedrock's errors are `{"message"}` with the error's name in `x-amzn-errortype`.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { nativeBody, nativeStream, parseNativeResponse } from '../anthropic/native.ts';
import { buildClaudeBody, claudeSettings, modelHeaders, thinkingModel } from '../anthropic/request.ts';
import { parseClaudeResponse } from '../anthropic/response.ts';
import { claudeStreamConversion } from '../anthropic/stream.ts';
import type { FrameTransformer } from '../frames.ts';
import { isObject, type Obj, str } from '../json.ts';
import type {
  ChannelConfig,
  Endpoint,
  ProviderAdaptor,
  RelayInput,
  StreamConversion,
  UpstreamError,
  UpstreamRequest,
} from '../types.ts';
import { eventStreamToClaudeSse } from './eventstream.ts';
import { bedrockModelId } from './models.ts';

export const AWS_CHANNEL_TYPE = 33;
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';
const SUPPORTED: ReadonlySet<Endpoint> = new Set(['chat', 'messages']);

/** us-east-1, eu-central-2, ap-southeast-1, us-gov-west-1, ca-central-1, ... */
const REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;

export type AwsKey =
  | { kind: 'sigv4'; accessKeyId: string; secretAccessKey: string; region: string }
  | { kind: 'bearer'; apiKey: string; region: string };

/** The channel key's parts; a malformed key throws an error that names the expected form (never the key). */
export function parseAwsKey(key: string): AwsKey {
  const parts = key.split('|').map((p) => p.trim());
  const region = parts.at(-1) ?? '';
  if (parts.length === 3 && parts[0] && parts[1] && REGION.test(region))
    return { kind: 'sigv4', accessKeyId: parts[0], secretAccessKey: parts[1], region };
  if (parts.length === 2 && parts[0] && REGION.test(region))
    return { kind: 'bearer', apiKey: parts[0], region };
  throw new Error(
    'an AWS key must be AccessKeyId|SecretAccessKey|Region (e.g. AKIA...|secret|us-east-1) or BedrockApiKey|Region',
  );
}

function origin(channel: ChannelConfig, region: string): string {
  return channel.baseUrl
    ? channel.baseUrl.replace(/\/+$/, '')
    : `https://bedrock-runtime.${region}.amazonaws.com`;
}

/** The admin's anthropic-beta flags for the model and the client's, as Bedrock's `anthropic_beta` list. */
function betaFlags(input: RelayInput): string[] {
  const flags = new Set<string>();
  const admin = modelHeaders(claudeSettings(input), input.upstreamModel).find(
    ([name]) => name.toLowerCase() === 'anthropic-beta',
  );
  for (const list of [admin?.[1] ?? null, input.clientHeaders.get('anthropic-beta')])
    for (const f of (list ?? '').split(',')) if (f.trim()) flags.add(f.trim());
  return [...flags];
}

/** The Bedrock body: Claude's Messages request without model and stream, with Bedrock's anthropic_version. */
export function bedrockBody(channel: ChannelConfig, input: RelayInput): Obj {
  const claude: Obj =
    input.endpoint === 'messages'
      ? (JSON.parse(nativeBody(channel, input)) as Obj)
      : { ...buildClaudeBody(channel, input), ...channel.paramOverride };
  const { model: _model, stream: _stream, ...rest } = claude;
  // InvokeModel refuses keys it does not know, and `metadata` is not among Bedrock's Claude parameters.
  delete rest.metadata;
  const out: Obj = { anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...rest };
  const beta = betaFlags(input);
  if (beta.length && !Array.isArray(out.anthropic_beta)) out.anthropic_beta = beta;
  return out;
}

export async function buildBedrockRequest(
  channel: ChannelConfig,
  input: RelayInput,
  now: () => number,
): Promise<UpstreamRequest> {
  const key = parseAwsKey(channel.key);
  // A `-thinking` suffix (claude.thinking_adapter_enabled) is not part of the model id.
  const { model } = thinkingModel(input.upstreamModel, claudeSettings(input).thinkingAdapterEnabled);
  const modelId = bedrockModelId(model, key.region);
  const op = input.stream ? 'invoke-with-response-stream' : 'invoke';
  const url = new URL(`${origin(channel, key.region)}/model/${encodeURIComponent(modelId)}/${op}`);
  const body = JSON.stringify(bedrockBody(channel, input));
  const accept = input.stream ? 'application/vnd.amazon.eventstream' : 'application/json';
  if (key.kind === 'bearer') {
    return {
      url: url.toString(),
      method: 'POST',
      headers: new Headers({
        'content-type': 'application/json',
        accept,
        authorization: `Bearer ${key.apiKey}`,
      }),
      body,
    };
  }
  const signer = new SignatureV4({
    service: 'bedrock',
    region: key.region,
    credentials: { accessKeyId: key.accessKeyId, secretAccessKey: key.secretAccessKey },
    sha256: Sha256,
  });
  const signed = await signer.sign(
    {
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname,
      query: {},
      headers: { host: url.host, 'content-type': 'application/json', accept },
      body,
    },
    { signingDate: new Date(now()) },
  );
  const headers = new Headers();
  for (const [name, value] of Object.entries(signed.headers)) {
    // The Host header is the URL's own: fetch and undici set it themselves.
    if (name.toLowerCase() !== 'host') headers.set(name, String(value));
  }
  return { url: url.toString(), method: 'POST', headers, body };
}

/** Bedrock error names (x-amzn-errortype, before any `:` suffix) → the neutral error types. */
function errorType(name: string, status: number): string {
  switch (name) {
    case 'UnrecognizedClientException':
    case 'InvalidSignatureException':
    case 'IncompleteSignatureException':
    case 'MissingAuthenticationTokenException':
    case 'ExpiredTokenException':
      return 'authentication_error';
    case 'AccessDeniedException':
      return 'permission_error';
    case 'ValidationException':
      return 'invalid_request_error';
    case 'ResourceNotFoundException':
      return 'not_found_error';
    case 'ThrottlingException':
    case 'ServiceQuotaExceededException':
      return 'rate_limit_error';
    case 'ModelNotReadyException':
    case 'ServiceUnavailableException':
      return 'overloaded_error';
    default:
      return status === 403 ? 'permission_error' : 'upstream_error';
  }
}

export function parseBedrockError(res: {
  status: number;
  headers: Headers;
  bodyText: string;
}): UpstreamError {
  let json: unknown;
  try {
    json = JSON.parse(res.bodyText);
  } catch {
    json = null;
  }
  const name = (res.headers.get('x-amzn-errortype') ?? '').split(':')[0]!.trim() || null;
  const message = isObject(json) ? str(json.message) || str(json.Message) : '';
  return {
    status: res.status,
    message: message || res.bodyText.trim().slice(0, 300) || `upstream returned status ${res.status}`,
    type: errorType(name ?? '', res.status),
    code: name,
  };
}

function chained(first: FrameTransformer, conv: StreamConversion): StreamConversion {
  const next = conv.transformer;
  return {
    transformer: {
      transform(chunk, out) {
        first.transform(chunk, { enqueue: (c) => next.transform(c, out) });
      },
      flush(out) {
        first.flush?.({ enqueue: (c) => next.transform(c, out) });
        next.flush?.(out);
      },
    },
    tally: conv.tally,
  };
}

export function createAwsAdaptor(now: () => number = Date.now): ProviderAdaptor {
  return {
    id: 'aws',
    channelTypes: [AWS_CHANNEL_TYPE],
    supports: (endpoint) => SUPPORTED.has(endpoint),
    buildRequest: (channel, input) => buildBedrockRequest(channel, input, now),
    parseResponse: (input, res) =>
      input.endpoint === 'messages'
        ? parseNativeResponse(res.body)
        : parseClaudeResponse(input, res.body, now),
    streamConversion: (input) =>
      chained(
        eventStreamToClaudeSse(),
        input.endpoint === 'messages' ? nativeStream() : claudeStreamConversion(input, now),
      ),
    parseError: parseBedrockError,
  };
}

export const awsAdaptor: ProviderAdaptor = createAwsAdaptor();
