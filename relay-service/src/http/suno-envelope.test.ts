import { describe, expect, it } from 'vitest';
import { envelopeFor } from './envelopes.ts';
import { isSunoPath } from './suno-envelope.ts';

describe('the Suno envelope', () => {
  it('owns /suno and /suno/... only', () => {
    expect(isSunoPath('/suno/submit/music')).toBe(true);
    expect(isSunoPath('/suno/fetch/abc')).toBe(true);
    expect(isSunoPath('/suno')).toBe(true);
    expect(isSunoPath('/sunoo/fetch')).toBe(false);
    expect(isSunoPath('/v1/suno')).toBe(false);
  });

  it('answers the console’s forwarding errors in new-api’s task envelope', async () => {
    const res = envelopeFor('/suno/submit/music')({
      status: 413,
      message: 'the request body is too large',
      type: 'invalid_request_error',
      code: 'body_too_large',
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({
      code: 'body_too_large',
      message: 'the request body is too large',
      data: null,
    });
    const noCode = envelopeFor('/suno/fetch')({ status: 404, message: 'no route', type: 'not_found' });
    expect(await noCode.json()).toEqual({ code: 'not_found', message: 'no route', data: null });
  });
});
