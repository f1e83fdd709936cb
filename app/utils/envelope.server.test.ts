import { DriverException } from '@mikro-orm/core';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  ForbiddenError,
  InputError,
  NotFoundError,
  TooManyRequestsError,
  UnauthorizedError,
} from '#app/domain/errors.ts';
import { envelope, fail, ok, readBody, toHttpResponse } from './envelope.server.ts';

async function read(res: Response) {
  return { status: res.status, type: res.headers.get('Content-Type'), body: await res.json() };
}

describe('envelope', () => {
  it('ok wraps data with success true and an empty message', async () => {
    expect(await read(ok({ a: 1 }))).toEqual({
      status: 200,
      type: 'application/json; charset=utf-8',
      body: { success: true, message: '', data: { a: 1 } },
    });
    expect((await read(ok(null, 'done'))).body.message).toBe('done');
  });

  it('fail carries the message and status', async () => {
    expect(await read(fail('nope', 409))).toMatchObject({
      status: 409,
      body: { success: false, message: 'nope', data: null },
    });
  });

  it.each([
    [new InputError('bad input', { name: ['required'] }), 200, { fieldErrors: { name: ['required'] } }],
    [new InputError('bad input'), 200, { fieldErrors: {} }],
    [new UnauthorizedError(), 401, null],
    [new ForbiddenError('admins only'), 403, null],
    [new NotFoundError('no such token'), 200, null],
    [new TooManyRequestsError('slow down'), 429, null],
  ])('maps %s to its envelope and status', async (error, status, data) => {
    const res = await read(toHttpResponse(error));
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ success: false, message: error.message, data });
  });

  it('refuses bad input the database or a stray schema caught, never a 500 (issue 13, item 7)', async () => {
    const outOfRange = new DriverException(
      Object.assign(new Error('integer out of range'), { code: '22003' }),
    );
    const rawQuery = Object.assign(new Error('invalid input syntax for type integer'), {
      code: '22P02',
      severity: 'ERROR',
    });
    const zod = z.object({ n: z.number() }).safeParse({ n: 'x' }).error;
    for (const error of [outOfRange, rawQuery, zod]) {
      const res = await read(toHttpResponse(error));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ success: false, message: 'invalid input' });
    }
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
    const protocol = new DriverException(
      Object.assign(new Error('invalid message format'), { code: '08P01' }),
    );
    expect((await read(toHttpResponse(protocol))).status).toBe(500);
    spy.mockRestore();
  });

  it('hides unexpected errors behind a generic 500', async () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
    const res = await read(toHttpResponse(new Error('connection string postgres://secret@db')));
    expect(res).toMatchObject({ status: 500, body: { success: false, message: 'internal server error' } });
    expect(JSON.stringify(res.body)).not.toContain('secret');
    spy.mockRestore();
  });

  it('passes thrown Responses through and runs handlers', async () => {
    const redirect = new Response(null, { status: 302, headers: { Location: '/login' } });
    expect(toHttpResponse(redirect)).toBe(redirect);
    expect((await envelope(() => ok(1))).status).toBe(200);
    expect(
      (
        await envelope(async () => {
          throw new NotFoundError();
        })
      ).status,
    ).toBe(200);
  });

  it('sends Retry-After with a rate-limit refusal', () => {
    const res = toHttpResponse(new TooManyRequestsError('slow down', 42));
    expect(res.status).toBe(429);
    expect(res.headers.get('Retry-After')).toBe('42');
  });

  it('reads JSON and form bodies, and treats bad bodies as empty', async () => {
    const post = (body: string, type: string) =>
      new Request('http://x/api', { method: 'POST', body, headers: { 'Content-Type': type } });
    expect(await readBody(post('{"a":1}', 'application/json'))).toEqual({ a: 1 });
    expect(await readBody(post('a=1&b=two', 'application/x-www-form-urlencoded'))).toEqual({
      a: '1',
      b: 'two',
    });
    expect(await readBody(post('{nope', 'application/json'))).toEqual({});
    expect(await readBody(post('[1,2]', 'application/json'))).toEqual({});
  });
});
