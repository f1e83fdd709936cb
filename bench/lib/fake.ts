/**
 * Benchmark fake upstream (child process): a minimal, allocation-light OpenAI chat endpoint on loopback.
 * tests/fakes/openai-upstream.ts records every request, which would grow without bound under load, so the
 * bench has its own. `POST /__config` sets the stream shape for the next scenario.
 *
 * Non-stream: a fixed ~600-byte chat.completion with usage. Stream: a role chunk, `frames` content deltas
 * `gapMs` apart (the first after `ttftMs`), a usage chunk and `[DONE]`. Each delta's content is the send time
 * (epoch microseconds, from performance.timeOrigin + now) so the client can check frames are not buffered.
 * `GET /__stats` returns the calls answered with usage and the token totals reported.
 */
import { createServer } from 'node:http';

type Shape = { frames: number; gapMs: number; ttftMs: number };
let shape: Shape = { frames: 8, gapMs: 0, ttftMs: 0 };
// Bumped by {finish:true}: open streams stop waiting and end normally (ends the memory run's long streams).
let epoch = 0;

const nowUs = () => Math.round((performance.timeOrigin + performance.now()) * 1000);

const USAGE = { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 };
// What the fake answered with usage (GET /__stats): billing reconciliation compares the consume logs with it.
// A stream counts once its usage chunk is written; one the client dropped before that reported nothing.
const stats = { answered: 0, streams: 0, promptTokens: 0, completionTokens: 0 };
const countUsage = (stream: boolean) => {
  stats.answered++;
  if (stream) stats.streams++;
  stats.promptTokens += USAGE.prompt_tokens;
  stats.completionTokens += USAGE.completion_tokens;
};
const JSON_BODY = JSON.stringify({
  id: 'chatcmpl-bench0000000000000000000000',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'gpt-4o-mini',
  system_fingerprint: 'fp_bench',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content:
          'Hello from the benchmark fake upstream. This reply is padded to roughly six hundred bytes of JSON so the relay does real parsing work on each call, as a short chat answer would.',
        refusal: null,
      },
      logprobs: null,
      finish_reason: 'stop',
    },
  ],
  usage: {
    ...USAGE,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
  },
});

const chunk = (delta: unknown, finish: string | null, usage?: unknown) =>
  `data: ${JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'gpt-4o-mini',
    choices: usage ? [] : [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(usage ? { usage } : {}),
  })}\n\n`;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (c: Buffer) => parts.push(c));
  req.on('end', async () => {
    if (req.url === '/__config') {
      const { finish, ...next } = JSON.parse(Buffer.concat(parts).toString());
      if (finish) epoch++;
      shape = { ...shape, ...next };
      res.writeHead(204).end();
      return;
    }
    if (req.url === '/__stats') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(stats));
      return;
    }
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
      return;
    }
    let stream = false;
    try {
      stream = JSON.parse(Buffer.concat(parts).toString()).stream === true;
    } catch {}
    if (!stream) {
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(JSON_BODY),
      });
      res.end(JSON_BODY);
      countUsage(false);
      return;
    }
    const s = shape;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(chunk({ role: 'assistant', content: '' }, null));
    let closed = false;
    res.on('close', () => {
      closed = true;
    });
    const mine = epoch;
    for (let i = 0; i < s.frames && !closed; i++) {
      const wait = i === 0 ? s.ttftMs : s.gapMs;
      if (wait > 0) await sleep(wait);
      if (epoch !== mine) break;
      res.write(chunk({ content: ` ${nowUs()}` }, null));
    }
    if (closed) return;
    res.write(chunk({}, 'stop'));
    res.write(chunk(null, null, USAGE));
    countUsage(true);
    res.end('data: [DONE]\n\n');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  const addr = server.address();
  process.send?.({ ready: true, port: typeof addr === 'object' && addr ? addr.port : 0 });
});
process.on('disconnect', () => process.exit(0));
