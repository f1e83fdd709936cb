import { describe, expect, it } from 'vitest';
import { createAwsAdaptor } from '../providers/aws/adaptor.ts';
import { channel, relayInput } from '../providers/testing.ts';
import type { UpstreamRequest } from '../providers/types.ts';
import { createVertexAdaptor } from '../providers/vertex/adaptor.ts';
import { buildUpstreamRequest, CredentialCache } from './credentials.ts';
import { RelayError } from './errors.ts';
import type { UpstreamClient } from './upstream-client.ts';

/** A client answering every request with `status` and `body`, counting the calls. */
function client(status: number, body: string): UpstreamClient & { sent: UpstreamRequest[] } {
  const sent: UpstreamRequest[] = [];
  return {
    sent,
    async send(req) {
      sent.push(req);
      return {
        status,
        headers: new Headers({ 'content-type': 'application/json' }),
        bytes: async () => new TextEncoder().encode(body),
        text: async () => body,
        chunks: () => null,
      };
    },
  };
}

const account = JSON.stringify({
  type: 'service_account',
  project_id: 'p',
  private_key: 'not a key',
  client_email: 'a@p.iam.gserviceaccount.com',
});

describe('credential and request errors are named, never passed off as an unreachable upstream', () => {
  const vertex = createVertexAdaptor();
  const stubbed = {
    ...vertex,
    credential: {
      request: () => ({ url: 'http://token', method: 'POST' as const, headers: new Headers(), body: '' }),
      parse: vertex.credential!.parse,
    },
  };

  it('a 2xx exchange without an access token is a 502 naming the channel', async () => {
    const err = await new CredentialCache()
      .resolve(stubbed, channel({ id: 9, type: 41, key: account }), client(200, '{}'))
      .catch((e) => e);
    expect(err).toBeInstanceOf(RelayError);
    expect(err.status).toBe(502);
    expect(err.message).toMatch(
      /channel 9: the credential exchange gave no usable credential: .*access_token/,
    );
  });

  it('a refused exchange is a 401 carrying the provider’s reason; a key that cannot sign is a 500', async () => {
    const refused = await new CredentialCache()
      .resolve(
        stubbed,
        channel({ type: 41, key: account }),
        client(400, '{"error":"invalid_grant","error_description":"Invalid JWT Signature."}'),
      )
      .catch((e) => e);
    expect(refused.status).toBe(401);
    expect(refused.message).toMatch(/Invalid JWT Signature/);
    const unusable = await new CredentialCache()
      .resolve(vertex, channel({ id: 3, type: 41, key: account }), client(200, '{}'))
      .catch((e) => e);
    expect(unusable.status).toBe(500);
    expect(unusable.message).toMatch(/channel 3: the key cannot be used: .*private_key/);
  });

  it('an adaptor that cannot build its request for the channel’s configuration fails with a clear 500', async () => {
    // A synchronous throw or a rejection, depending on the adaptor: the same RelayError either way.
    const err = await Promise.resolve()
      .then(() =>
        buildUpstreamRequest(
          createAwsAdaptor(),
          channel({ id: 4, type: 33, key: 'just-one-part' }),
          relayInput(),
        ),
      )
      .catch((e) => e);
    expect(err).toBeInstanceOf(RelayError);
    expect(err.status).toBe(500);
    expect(err.message).toMatch(
      /^channel 4 cannot be used as configured: an AWS key must be AccessKeyId\|SecretAccessKey\|Region/,
    );
  });
});
