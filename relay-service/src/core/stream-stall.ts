/**
 * The last event of an HTTP stream whose client stopped reading (ADR 039), in the stream's own format: what a
 * client that reads again finds before the stream ends. null for streams that are not events (speech audio).
 */
import type { Endpoint } from '../providers/types.ts';

const encoder = new TextEncoder();
const CODE = 'client_too_slow';

export function stallFrame(endpoint: Endpoint, message: string): Uint8Array | null {
  switch (endpoint) {
    case 'speech':
      return null;
    // Anthropic Messages: an `error` event.
    case 'messages':
      return encoder.encode(
        `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message } })}\n\n`,
      );
    // Gemini streamGenerateContent (alt=sse): a google.rpc.Status error object.
    case 'generate':
      return encoder.encode(
        `data: ${JSON.stringify({ error: { code: 504, message, status: 'DEADLINE_EXCEEDED' } })}\n\n`,
      );
    // Responses API: an `error` event.
    case 'responses':
      return encoder.encode(
        `event: error\ndata: ${JSON.stringify({ type: 'error', code: CODE, message, param: null })}\n\n`,
      );
    // Chat and legacy completions: OpenAI's in-stream error object.
    default:
      return encoder.encode(
        `data: ${JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code: CODE } })}\n\n`,
      );
  }
}
