import { describe, expect, it, vi } from 'vitest';
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

describe('relayFailure across module copies', () => {
  it('reads a RelayError made by another copy of the relay client module (the built product has two)', async () => {
    vi.resetModules();
    const copy = await import('#app/grpc/relay-client.server.ts');
    expect(copy.RelayError).not.toBe(RelayError);
    const err = new copy.RelayError('upstream_failed', 'no available channel for model m in group default');
    expect(relayFailure(err, ADDRESS)).toEqual({
      code: 'upstream_failed',
      message: 'no available channel for model m in group default',
    });
    const impostor = Object.assign(new Error('x'), { name: 'RelayError', code: 'no-such-code' });
    expect(relayFailure(impostor, ADDRESS)).toBeNull();
  });
});
