/**
 * The official openai SDK's realtime client (`OpenAIRealtimeWS` from `openai/realtime/ws`) against the relay.
 * The SDK only speaks wss://, so the relay sits behind a TLS edge (as behind an Ingress): a loopback TLS server
 * with a throwaway self-signed certificate (made with the openssl CLI) that passes bytes to the relay's port.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer, type Server } from 'node:tls';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FakeRealtime, startFakeRealtime } from '../fakes/openai-realtime-upstream.ts';
import {
  drained,
  type Stack,
  seedChannel,
  seedToken,
  seedUser,
  setOptions,
  startStack,
} from './relay-stack.ts';

let fake: FakeRealtime;
let stack: Stack;
let edge: Server;
let edgeUrl: string;
let cert: string;

beforeAll(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'realtime-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    cert = readFileSync(path.join(dir, 'cert.pem'), 'utf8');
    const key = readFileSync(path.join(dir, 'key.pem'), 'utf8');
    fake = await startFakeRealtime();
    stack = await startStack({ suffix: 'relay_realtime_sdk' });
    await seedChannel(stack, { baseUrl: fake.url, models: ['gpt-realtime'] });
    await setOptions(stack, {
      ModelRatio: '{"gpt-realtime":2}',
      CompletionRatio: '{"gpt-realtime":4}',
      AudioRatio: '{"gpt-realtime":16}',
      AudioCompletionRatio: '{"gpt-realtime":2}',
    });
    const relay = new URL(stack.relays[0]!.httpUrl);
    edge = createServer({ key, cert }, (tlsSocket) => {
      const up = connect(Number(relay.port), relay.hostname);
      tlsSocket.pipe(up).on('error', () => tlsSocket.destroy());
      up.pipe(tlsSocket).on('error', () => up.destroy());
      tlsSocket.on('close', () => up.destroy());
      up.on('close', () => tlsSocket.destroy());
    });
    await new Promise<void>((resolve) => edge.listen(0, '127.0.0.1', resolve));
    edgeUrl = `https://127.0.0.1:${(edge.address() as { port: number }).port}/v1`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (edge ? edge.close(() => resolve()) : resolve()));
  await stack?.close();
  await fake?.close();
});

it('OpenAIRealtimeWS opens a session through the relay, gets two responses, each billed as a log row', async () => {
  const user = await seedUser(stack, { quota: 1_000_000 });
  const token = await seedToken(stack, user.id, { remainQuota: 1_000_000 });
  const client = new OpenAI({ apiKey: `sk-${token.key}`, baseURL: edgeUrl, maxRetries: 0 });
  const rt = new OpenAIRealtimeWS({ model: 'gpt-realtime', options: { ca: cert } }, client);
  const errors: unknown[] = [];
  rt.on('error', (err) => errors.push(err));
  const text: string[] = [];
  rt.on('response.output_text.delta', (ev) => text.push(ev.delta));
  const dones: Array<{ response: { usage?: unknown } }> = [];
  const created = new Promise<void>((resolve) => rt.on('session.created', () => resolve()));
  const twoDone = new Promise<void>((resolve) =>
    rt.on('response.done', (ev) => {
      dones.push(ev);
      if (dones.length === 1) rt.send({ type: 'response.create' });
      if (dones.length === 2) resolve();
    }),
  );
  await created;
  fake.next(
    { text: 'first', usage: { textIn: 10, audioIn: 20, textOut: 2, audioOut: 30 } },
    { text: 'second', usage: { textIn: 40, audioIn: 0, textOut: 5, audioOut: 0 } },
  );
  rt.send({ type: 'response.create' });
  await twoDone;
  rt.close();
  await new Promise<void>((resolve) => rt.socket.once('close', () => resolve()));

  expect(errors).toEqual([]);
  expect(text.join('')).toBe('firstsecond');
  expect(dones[0]?.response.usage).toMatchObject({ input_tokens: 30, output_tokens: 32 });
  // The SDK sent the key as a Bearer header; the relay sent the channel's key upstream.
  expect(fake.connections[0]?.auth).toBe('header');
  await drained(stack);
  const rows = await stack.sql<{ quota: number }>(
    `select quota::int as quota from logs where user_id = ? and type = 2 order by id`,
    [user.id],
  );
  // (10 + 2·4 + 20·16 + 30·32)·2 = 2596; (40 + 5·4)·2 = 120.
  expect(rows.map((r) => r.quota)).toEqual([2596, 120]);
});
