import { Client, credentials, Metadata, Server, type ServiceError, status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../log.ts';
import { bindServer, grpcAddress, shutdownGracefully } from './lifecycle.ts';
import { RpcError, unary } from './unary.ts';

// A hand-written service over raw bytes keeps this test independent of any .proto.
const identity = (b: Buffer) => b;
const definition = {
  call: {
    path: '/test.Test/Call',
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
} as const;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function serve(
  handler: (req: Buffer, ctx: { signal: AbortSignal }) => Promise<Buffer>,
  defaultTimeoutMs?: number,
) {
  const server = new Server();
  server.addService(definition, {
    call: unary(
      { log: silentLogger, method: 'Call', ...(defaultTimeoutMs ? { defaultTimeoutMs } : {}) },
      handler,
    ),
  });
  const port = await bindServer(server, '127.0.0.1', 0);
  const client = new Client(grpcAddress('127.0.0.1', port), credentials.createInsecure());
  cleanups.push(() => shutdownGracefully(server, 100));
  cleanups.push(() => client.close());
  return (timeoutMs?: number) =>
    new Promise<Buffer>((resolve, reject) => {
      client.makeUnaryRequest(
        definition.call.path,
        identity,
        identity,
        Buffer.from('ping'),
        new Metadata(),
        timeoutMs ? { deadline: Date.now() + timeoutMs } : {},
        (err: ServiceError | null, res?: Buffer) => (err ? reject(err) : resolve(res!)),
      );
    });
}

describe('unary()', () => {
  it('answers with the handler result', async () => {
    const call = await serve(async (req) => Buffer.concat([req, Buffer.from('!')]));
    expect((await call(1_000)).toString()).toBe('ping!');
  });

  it("aborts the handler's signal at the caller's deadline", async () => {
    let aborted: unknown;
    const call = await serve(
      (_req, { signal }) =>
        new Promise((_, reject) =>
          signal.addEventListener('abort', () => {
            aborted = signal.reason;
            reject(signal.reason);
          }),
        ),
    );
    await expect(call(150)).rejects.toMatchObject({ code: status.DEADLINE_EXCEEDED });
    await new Promise((r) => setTimeout(r, 50));
    expect(aborted).toBeInstanceOf(RpcError);
  });

  it('caps calls without a deadline at the server default', async () => {
    const call = await serve(() => new Promise(() => {}), 150);
    await expect(call()).rejects.toMatchObject({ code: status.DEADLINE_EXCEEDED });
  });

  it('keeps RpcError codes and hides other errors behind INTERNAL', async () => {
    const notFound = await serve(async () => {
      throw new RpcError(status.NOT_FOUND, 'no such channel');
    });
    await expect(notFound(1_000)).rejects.toMatchObject({
      code: status.NOT_FOUND,
      details: 'no such channel',
    });
    const broken = await serve(async () => {
      throw new Error('secret database detail');
    });
    await expect(broken(1_000)).rejects.toMatchObject({ code: status.INTERNAL, details: 'internal error' });
  });
});
