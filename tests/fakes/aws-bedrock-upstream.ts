/**
 * A fake of Amazon Bedrock Runtime's InvokeModel and InvokeModelWithResponseStream for Anthropic Claude models
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModel.html,
 * .../API_runtime_InvokeModelWithResponseStream.html), for relay tests.
 *
 * - `POST /model/{modelId}/invoke` and `/model/{modelId}/invoke-with-response-stream`.
 * - Authentication as AWS checks it: a SigV4 `Authorization` header, verified here independently of the relay's
 *   signer (node:crypto): the canonical request is rebuilt from what arrived (method, the path with each segment
 *   URI-encoded again, the query, the signed headers, the SHA-256 of the body), signed with the secret the fake
 *   knows for the access key id, and compared. An unknown access key is refused with 403
 *   UnrecognizedClientException, a wrong signature with 403 InvalidSignatureException, both as
 *   `{"message"}` with `x-amzn-errortype`. A Bedrock API key may be sent as `Authorization: Bearer`.
 * - The body must be Claude's Messages request with `anthropic_version: bedrock-2023-05-31` and neither `model`
 *   nor `stream` (400 ValidationException otherwise, as Bedrock refuses extraneous keys).
 * - The answer comes from the fake Anthropic API (anthropic-upstream.ts) this fake runs inside: the message as
 *   is, or its stream events each base64-encoded into an event-stream `chunk` message `{"bytes":"..."}`.
 */
import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { type AnthropicUsage, startFakeAnthropic } from './anthropic-upstream.ts';

export type BedrockRule = {
  /** Only for this model id (as in the path). */
  modelId?: string;
  /** An answer of the Claude fake: content and usage. */
  respond?: { content?: string; usage?: AnthropicUsage };
  /** An HTTP error in Bedrock's shape. */
  error?: { status: number; type: string; message: string };
  /** For streams: after the first events, an exception message (`:message-type: exception`). */
  streamException?: { type: string; message: string };
  times?: number;
};

export type BedrockRequest = {
  path: string;
  modelId: string;
  operation: 'invoke' | 'invoke-with-response-stream';
  headers: Record<string, string>;
  body: Record<string, unknown> | null;
  /** The region and service of the credential scope, when SigV4-signed. */
  scope?: { region: string; service: string; accessKeyId: string };
};

export type FakeBedrock = {
  url: string;
  requests: BedrockRequest[];
  on(rule: BedrockRule): void;
  reset(): void;
  close(): Promise<void>;
};

type Obj = Record<string, unknown>;
const codec = new EventStreamCodec(toUtf8, fromUtf8);

const readBody = (req: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });

/** RFC 3986 encoding as SigV4 wants it (encodeURIComponent leaves !'()* alone). */
const uriEncode = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

/** Verifies a SigV4 Authorization header; returns the error Bedrock would answer, or the scope. */
function verifySigV4(
  req: IncomingMessage,
  body: Buffer,
  secrets: Record<string, string>,
):
  | { ok: true; region: string; service: string; accessKeyId: string }
  | { ok: false; type: string; message: string } {
  const auth = req.headers.authorization ?? '';
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (!m)
    return {
      ok: false,
      type: 'IncompleteSignatureException',
      message: 'Authorization header requires a SigV4 signature.',
    };
  const [, accessKeyId, date, region, service, signedHeaders, signature] = m as unknown as string[];
  const secret = secrets[accessKeyId!];
  if (secret === undefined)
    return {
      ok: false,
      type: 'UnrecognizedClientException',
      message: 'The security token included in the request is invalid.',
    };
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  if (!amzDate.startsWith(date!))
    return {
      ok: false,
      type: 'IncompleteSignatureException',
      message: 'Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP.',
    };
  const url = new URL(req.url ?? '/', 'http://fake');
  const canonicalUri = url.pathname
    .split('/')
    .map((seg) => uriEncode(seg))
    .join('/');
  const query = [...url.searchParams]
    .map(([k, v]) => [uriEncode(k), uriEncode(v)] as const)
    .sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : 1) : a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const names = signedHeaders!.split(';');
  if (!names.includes('host'))
    return {
      ok: false,
      type: 'IncompleteSignatureException',
      message: "'Host' must be a 'SignedHeader' in the AWS Authorization.",
    };
  const canonicalHeaders = names
    .map(
      (n) =>
        `${n}:${String(req.headers[n] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('');
  const canonicalRequest = [
    req.method,
    canonicalUri,
    query,
    canonicalHeaders,
    signedHeaders,
    sha256Hex(body),
  ].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date!), region!), service!), 'aws4_request');
  const expected = createHmac('sha256', key).update(stringToSign).digest('hex');
  if (expected !== signature)
    return {
      ok: false,
      type: 'InvalidSignatureException',
      message:
        'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
    };
  return { ok: true, region: region!, service: service!, accessKeyId: accessKeyId! };
}

/** One event-stream message. */
const frame = (headers: Record<string, string>, payload: Obj) =>
  codec.encode({
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, { type: 'string', value: v }])),
    body: new TextEncoder().encode(JSON.stringify(payload)),
  });

function parseSse(text: string): Obj[] {
  return text
    .split('\n\n')
    .map((block) =>
      block
        .split('\n')
        .find((l) => l.startsWith('data: '))
        ?.slice(6),
    )
    .filter((d): d is string => !!d)
    .map((d) => JSON.parse(d) as Obj);
}

export async function startFakeBedrock(
  opts: { credentials?: Record<string, string>; apiKeys?: string[]; region?: string } = {},
): Promise<FakeBedrock> {
  const claude = await startFakeAnthropic();
  const secrets = opts.credentials ?? {};
  const requests: BedrockRequest[] = [];
  let rules: BedrockRule[] = [];

  const sendError = (res: ServerResponse, status: number, type: string, message: string) => {
    res.writeHead(status, {
      'content-type': 'application/json',
      'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
      'x-amzn-requestid': crypto.randomUUID(),
    });
    res.end(JSON.stringify({ message }));
  };

  const server = createServer(async (req, res) => {
    const raw = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://fake');
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    const m = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream)$/.exec(url.pathname);
    let body: Obj | null = null;
    try {
      body = raw.length ? (JSON.parse(raw.toString('utf8')) as Obj) : null;
    } catch {
      body = null;
    }
    const record: BedrockRequest = {
      path: url.pathname,
      modelId: m ? decodeURIComponent(m[1]!) : '',
      operation: (m?.[2] ?? 'invoke') as BedrockRequest['operation'],
      headers,
      body,
    };
    requests.push(record);

    const bearer = /^Bearer (.+)$/.exec(headers.authorization ?? '')?.[1];
    if (bearer !== undefined) {
      if (!opts.apiKeys?.includes(bearer))
        return sendError(
          res,
          403,
          'UnrecognizedClientException',
          'Invalid API Key format: Must start with pre-defined prefix',
        );
    } else {
      const v = verifySigV4(req, raw, secrets);
      if (!v.ok) return sendError(res, 403, v.type, v.message);
      record.scope = { region: v.region, service: v.service, accessKeyId: v.accessKeyId };
      if (v.service !== 'bedrock')
        return sendError(
          res,
          403,
          'InvalidSignatureException',
          `Credential should be scoped to correct service: 'bedrock'.`,
        );
      if (opts.region && v.region !== opts.region)
        return sendError(
          res,
          403,
          'InvalidSignatureException',
          `Credential should be scoped to a valid region.`,
        );
    }
    if (req.method !== 'POST' || !m)
      return sendError(res, 404, 'UnknownOperationException', 'Unknown operation');
    if (!body)
      return sendError(
        res,
        400,
        'ValidationException',
        'Malformed input request, please reformat your input and try again.',
      );
    for (const extraneous of ['model', 'stream'])
      if (extraneous in body)
        return sendError(
          res,
          400,
          'ValidationException',
          `Malformed input request: #: extraneous key [${extraneous}] is not permitted, please reformat your input and try again.`,
        );
    if (body.anthropic_version !== 'bedrock-2023-05-31')
      return sendError(
        res,
        400,
        'ValidationException',
        'Malformed input request: #: required key [anthropic_version] not found, please reformat your input and try again.',
      );
    if (!/^((us|eu|apac)\.)?anthropic\.claude-/.test(record.modelId))
      return sendError(res, 400, 'ValidationException', 'The provided model identifier is invalid.');

    const ruleIndex = rules.findIndex((r) => !r.modelId || r.modelId === record.modelId);
    const rule = ruleIndex >= 0 ? rules[ruleIndex] : undefined;
    if (rule?.times !== undefined && --rule.times <= 0) rules.splice(ruleIndex, 1);
    if (rule?.error) return sendError(res, rule.error.status, rule.error.type, rule.error.message);

    const stream = record.operation === 'invoke-with-response-stream';
    const { anthropic_version: _v, ...claudeBody } = body;
    if (rule?.respond) claude.on({ respond: rule.respond, times: 1 });
    const inner = await fetch(`${claude.url}/v1/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': 'bedrock',
        'anthropic-version': '2023-06-01',
      },
      body: JSON.stringify({ ...claudeBody, model: record.modelId, ...(stream ? { stream: true } : {}) }),
    });
    const text = await inner.text();
    if (!stream) {
      res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': crypto.randomUUID() });
      res.end(text);
      return;
    }
    res.writeHead(200, {
      'content-type': 'application/vnd.amazon.eventstream',
      'x-amzn-requestid': crypto.randomUUID(),
      'x-amzn-bedrock-content-type': 'application/json',
    });
    const events = parseSse(text);
    events.forEach((event, i) => {
      if (rule?.streamException && i === 3) {
        res.write(
          frame(
            {
              ':message-type': 'exception',
              ':exception-type': rule.streamException.type,
              ':content-type': 'application/json',
            },
            { message: rule.streamException.message },
          ),
        );
      }
      if (rule?.streamException && i >= 3) return;
      res.write(
        frame(
          { ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' },
          { bytes: Buffer.from(JSON.stringify(event)).toString('base64') },
        ),
      );
    });
    res.end();
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    on(rule) {
      rules.push(rule);
    },
    reset() {
      rules = [];
      requests.length = 0;
      claude.reset();
    },
    close: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await claude.close();
    },
  };
}
