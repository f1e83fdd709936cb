import { describe, expect, it } from 'vitest';
import { redact, relayFailure } from '#app/domain/relay-errors.server.ts';
import { RelayError } from '#app/grpc/relay-client.server.ts';

const ADDRESS = '10.0.0.7:50052';

describe('relayFailure', () => {
  it('says the relay is down without naming its address', () => {
    const err = new RelayError(
      'unavailable',
      `relay at ${ADDRESS} is unavailable: No connection established. Last error: connect ECONNREFUSED ${ADDRESS}`,
    );
    expect(relayFailure(err, ADDRESS)).toEqual({
      code: 'unavailable',
      message: 'The relay service is unavailable, try again later',
    });
    expect(
      relayFailure(
        new RelayError('deadline_exceeded', `relay at ${ADDRESS} did not answer in time`),
        ADDRESS,
      ),
    ).toEqual({ code: 'deadline_exceeded', message: 'The relay service did not answer in time' });
  });

  it("keeps the relay's own refusals, including an upstream failure it reports as UNAVAILABLE", () => {
    const upstream = new RelayError(
      'unavailable',
      `relay at ${ADDRESS} is unavailable: no channel for model x`,
    );
    expect(relayFailure(upstream, ADDRESS)).toEqual({
      code: 'unavailable',
      message: 'no channel for model x',
    });
    const denied = new RelayError('permission_denied', 'group svip is not usable by this user');
    expect(relayFailure(denied, ADDRESS)).toEqual({
      code: 'permission_denied',
      message: 'group svip is not usable by this user',
    });
    expect(relayFailure(new Error('boom'), ADDRESS)).toBeNull();
  });
});

describe('redact', () => {
  it('replaces every key line and ignores fragments too short to be a key', () => {
    expect(redact('bad sk-aaaa and sk-bbbb, again sk-aaaa', ['sk-aaaa', 'sk-bbbb', 'x'])).toBe(
      'bad *** and ***, again ***',
    );
  });
});
