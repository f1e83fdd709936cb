/**
 * Bedrock's InvokeModelWithResponseStream reply is an `application/vnd.amazon.eventstream` body: binary messages
 * (4-byte total length, 4-byte headers length, prelude CRC, headers, payload, message CRC), decoded with AWS's
 * own codec. A `:message-type: event` message with `:event-type: chunk` carries `{"bytes":"<base64>"}`, the
 * base64 of one Claude stream event as JSON; a `:message-type: exception` message carries `{"message"}` with its
 * name in `:exception-type` (throttlingException, modelStreamErrorException, ...).
 *
 * This stage turns those messages into the Claude SSE Anthropic itself sends (`event: <type>\ndata: <json>`), so
 * the Claude stream conversions (OpenAI chunks, or the Claude passthrough) run unchanged after it. An exception
 * becomes Claude's `error` event. Messages split across reads are buffered until whole.
 */
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import type { FrameSink, FrameTransformer } from '../frames.ts';
import { isObject, str } from '../json.ts';

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A message larger than this is not Bedrock talking (its chunks are small): the stream is treated as broken. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

const sse = (type: string, data: unknown) =>
  encoder.encode(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);

/** A Claude `error` event (https://docs.anthropic.com/en/docs/build-with-claude/streaming#error-events). */
export function claudeErrorEvent(type: string, message: string): Uint8Array {
  return sse('error', { type: 'error', error: { type, message } });
}

/** Bedrock exception names → Claude error types. */
function claudeErrorType(exception: string): string {
  const name = exception.charAt(0).toLowerCase() + exception.slice(1);
  switch (name) {
    case 'throttlingException':
      return 'rate_limit_error';
    case 'validationException':
      return 'invalid_request_error';
    case 'serviceUnavailableException':
    case 'modelNotReadyException':
      return 'overloaded_error';
    default:
      return 'api_error';
  }
}

function base64Bytes(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function headerString(headers: Record<string, { type: string; value: unknown }>, name: string): string {
  const h = headers[name];
  return h && h.type === 'string' ? String(h.value) : '';
}

/** One decoded message → the Claude SSE it stands for (nothing for events that carry no Claude event). */
function toSse(message: Uint8Array): Uint8Array | null {
  const { headers, body } = codec.decode(message);
  const messageType = headerString(headers, ':message-type');
  const text = decoder.decode(body);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  if (messageType === 'exception' || messageType === 'error') {
    const name =
      headerString(headers, ':exception-type') ||
      headerString(headers, ':error-code') ||
      'internalServerException';
    const msg =
      (isObject(json) && (str(json.message) || str(json.Message))) ||
      headerString(headers, ':error-message') ||
      name;
    return claudeErrorEvent(claudeErrorType(name), msg);
  }
  if (headerString(headers, ':event-type') !== 'chunk' || !isObject(json) || !str(json.bytes)) return null;
  const eventText = decoder.decode(base64Bytes(str(json.bytes)));
  let event: unknown;
  try {
    event = JSON.parse(eventText);
  } catch {
    return null;
  }
  if (!isObject(event) || !str(event.type)) return null;
  return sse(str(event.type), event);
}

export function eventStreamToClaudeSse(): FrameTransformer {
  let buf = new Uint8Array(0);
  let broken = false;
  return {
    transform(chunk: Uint8Array, out: FrameSink) {
      if (broken) return;
      const joined = new Uint8Array(buf.length + chunk.length);
      joined.set(buf);
      joined.set(chunk, buf.length);
      let at = 0;
      while (joined.length - at >= 4) {
        const total = new DataView(joined.buffer, joined.byteOffset + at, 4).getUint32(0, false);
        if (total < 16 || total > MAX_MESSAGE_BYTES) {
          broken = true;
          out.enqueue(claudeErrorEvent('api_error', 'the upstream sent a malformed event stream'));
          return;
        }
        if (joined.length - at < total) break;
        let frame: Uint8Array | null;
        try {
          frame = toSse(joined.subarray(at, at + total));
        } catch {
          // A checksum mismatch: the bytes were damaged on the way, nothing after them can be trusted.
          broken = true;
          out.enqueue(claudeErrorEvent('api_error', 'the upstream sent a corrupt event stream message'));
          return;
        }
        if (frame) out.enqueue(frame);
        at += total;
      }
      buf = joined.slice(at);
    },
    flush(out: FrameSink) {
      if (!broken && buf.length > 0)
        out.enqueue(
          claudeErrorEvent('api_error', 'the upstream stream ended inside an event stream message'),
        );
      buf = new Uint8Array(0);
    },
  };
}
