import { encodeChat } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import {
  countChatPromptTokens,
  countPromptTokens,
  countPromptTokensWith,
  countTextsBounded,
  countTextTokens,
  encodingForModel,
  IMAGE_TOKENS_HIGH,
  IMAGE_TOKENS_LOW,
  MAX_RUN_CHARS,
  segments,
  TOKENIZE_BUDGET_CHARS,
  tokenCounter,
  utf8Bytes,
} from './tokenize.ts';

// Reference counts (checked against gpt-tokenizer): o200k_base "hello world" 2, "hi" 1, "user" 1, "system" 1,
// "bob" 1, "You are a helpful assistant." 6, "What is the capital of France?" 7, "Describe this image." 4,
// "get_weather" 2, '{"city":"Paris"}' 5; "你好，世界" is 3 in o200k_base and 6 in cl100k_base.

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      parameters: { type: 'object', properties: { city: { type: 'string' } } },
    },
  },
];

describe('encodingForModel', () => {
  it('uses cl100k_base for gpt-3.5 / gpt-4 / embeddings and o200k_base otherwise', () => {
    for (const m of [
      'gpt-3.5-turbo',
      'gpt-4',
      'gpt-4-0613',
      'gpt-4-turbo',
      'text-embedding-3-small',
      'ft:gpt-3.5-turbo:x',
    ]) {
      expect(encodingForModel(m), m).toBe('cl100k_base');
    }
    for (const m of [
      'gpt-4o',
      'gpt-4o-mini',
      'gpt-4.1',
      'o1',
      'o3-mini',
      'gpt-5',
      'claude-sonnet-4-20250514',
      '',
    ]) {
      expect(encodingForModel(m), m).toBe('o200k_base');
    }
  });

  it('loads each encoding once', async () => {
    const a = await tokenCounter('gpt-4o');
    expect(await tokenCounter('o3-mini')).toBe(a);
    expect(a.encoding).toBe('o200k_base');
    const b = await tokenCounter('gpt-4');
    expect(b.encoding).toBe('cl100k_base');
    expect(b).not.toBe(a);
  });
});

describe('countTextTokens', () => {
  it('counts with the model encoding', async () => {
    expect(await countTextTokens('hello world', 'gpt-4o')).toBe(2);
    expect(await countTextTokens('你好，世界', 'gpt-4o')).toBe(3);
    expect(await countTextTokens('你好，世界', 'gpt-4')).toBe(6);
    expect(await countTextTokens('', 'gpt-4o')).toBe(0);
  });

  it('counts special-token markers in client text as plain text', async () => {
    // "<|endoftext|>" as text is 7 tokens in both encodings (not 1, and not an error).
    expect(await countTextTokens('<|endoftext|>', 'gpt-4o')).toBe(7);
    expect(await countTextTokens('<|endoftext|>', 'gpt-3.5-turbo')).toBe(7);
  });
});

describe('countChatPromptTokens', () => {
  it("adds OpenAI's per-message overhead and reply primer", async () => {
    const messages = [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: 'What is the capital of France?' },
    ];
    // (3 + 1 + 6) + (3 + 1 + 7) + 3 = 24, the same as the library's chat encoding for gpt-4o
    expect(await countChatPromptTokens(messages, 'gpt-4o')).toBe(24);
    expect(encodeChat(messages as Parameters<typeof encodeChat>[0], 'gpt-4o')).toHaveLength(24);
  });

  it('adds 1 per name', async () => {
    // 3 + user 1 + "hi" 1 + "bob" 1 + 1 + 3 = 10
    expect(await countChatPromptTokens([{ role: 'user', content: 'hi', name: 'bob' }], 'gpt-4o')).toBe(10);
  });

  it('counts text parts and a flat estimate per image', async () => {
    const msg = (detail?: string) => ({
      role: 'user',
      content: [
        { type: 'text', text: 'Describe this image.' },
        { type: 'image_url', image_url: { url: 'https://example.com/a.png', ...(detail ? { detail } : {}) } },
      ],
    });
    expect(IMAGE_TOKENS_LOW).toBe(85);
    expect(IMAGE_TOKENS_HIGH).toBe(85 + 170 * 4);
    // 3 + 1 + 4 + 85 + 3 = 96
    expect(await countChatPromptTokens([msg('low')], 'gpt-4o')).toBe(96);
    // 3 + 1 + 4 + 765 + 3 = 776 (high, auto and unspecified)
    expect(await countChatPromptTokens([msg('high')], 'gpt-4o')).toBe(776);
    expect(await countChatPromptTokens([msg()], 'gpt-4o')).toBe(776);
  });

  it('counts tool definitions as JSON and earlier tool calls', async () => {
    const toolsJson = await countTextTokens(JSON.stringify(TOOLS), 'gpt-4o');
    expect(toolsJson).toBe(29);
    // 3 + 1 + 1 + 3 + 29 = 37
    expect(await countChatPromptTokens([{ role: 'user', content: 'hi' }], 'gpt-4o', TOOLS)).toBe(37);
    const call = {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      ],
    };
    // 3 + assistant 1 + name 2 + arguments 5 + 3 = 14
    expect(await countChatPromptTokens([call], 'gpt-4o')).toBe(14);
  });

  it('ignores malformed entries instead of throwing', async () => {
    expect(await countChatPromptTokens('nope', 'gpt-4o')).toBe(3);
    expect(await countChatPromptTokens([null, 5, { role: 'user', content: 'hi' }], 'gpt-4o')).toBe(3 + 5);
  });
});

describe('countPromptTokens', () => {
  it('chat: messages plus tools (or legacy functions)', async () => {
    const messages = [{ role: 'user', content: 'hi' }];
    expect(await countPromptTokens('chat', { messages }, 'gpt-4o')).toBe(8);
    expect(await countPromptTokens('chat', { messages, tools: TOOLS }, 'gpt-4o')).toBe(37);
    expect(await countPromptTokens('chat', { messages, functions: TOOLS }, 'gpt-4o')).toBe(37);
  });

  it('completions and embeddings: strings, string arrays and token arrays', async () => {
    expect(await countPromptTokens('completions', { prompt: 'hello world' }, 'gpt-3.5-turbo-instruct')).toBe(
      2,
    );
    expect(await countPromptTokens('completions', { prompt: ['hello world', 'hi'] }, 'gpt-4o')).toBe(3);
    expect(await countPromptTokens('completions', { prompt: [15339, 1917, 0] }, 'gpt-4o')).toBe(3);
    expect(await countPromptTokens('embeddings', { input: [[1, 2], [3]] }, 'text-embedding-3-small')).toBe(3);
    expect(await countPromptTokens('embeddings', { input: '你好，世界' }, 'text-embedding-3-small')).toBe(6);
    expect(
      await countPromptTokens('embeddings', { input: ['你好，世界', 'hi'] }, 'text-embedding-3-large'),
    ).toBe(7);
  });

  it('responses: string input as a user message, instructions as a system message, items', async () => {
    // 3 primer + (3 + 1 + 1) = 8
    expect(await countPromptTokens('responses', { input: 'hi' }, 'gpt-4o')).toBe(8);
    // + (3 + system 1 + 6) = 18
    expect(
      await countPromptTokens(
        'responses',
        { input: 'hi', instructions: 'You are a helpful assistant.' },
        'gpt-4o',
      ),
    ).toBe(18);
    const input = [
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'hi' },
          { type: 'input_image', detail: 'low', image_url: 'https://example.com/a.png' },
        ],
      },
      { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'hi' },
      { type: 'reasoning', encrypted_content: 'gAAAA' },
    ];
    // 3 primer + (3 + 1 + 1 + 85) + (2 + 5) + 1 = 101
    expect(await countPromptTokens('responses', { input }, 'gpt-4o')).toBe(101);
    // tools: + 29
    expect(await countPromptTokens('responses', { input, tools: TOOLS }, 'gpt-4o')).toBe(130);
  });

  it('moderations, speech, images and rerank', async () => {
    expect(await countPromptTokens('moderations', { input: 'hello world' }, 'omni-moderation-latest')).toBe(
      2,
    );
    expect(
      await countPromptTokens('moderations', { input: ['hello world', 'hi'] }, 'omni-moderation-latest'),
    ).toBe(3);
    const parts = [
      { type: 'text', text: 'hi' },
      { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
    ];
    expect(await countPromptTokens('moderations', { input: parts }, 'omni-moderation-latest')).toBe(1 + 765);
    const fox = 'The quick brown fox jumps over the lazy dog.';
    expect(await countPromptTokens('speech', { input: fox, voice: 'alloy' }, 'tts-1')).toBe(10);
    expect(await countPromptTokens('images', { prompt: 'hi', n: 2 }, 'dall-e-3')).toBe(1);
    expect(
      await countPromptTokens(
        'rerank',
        { query: 'hi', documents: ['hello world', { text: 'hi' }] },
        'rerank-v3',
      ),
    ).toBe(4);
  });

  it('multipart bodies: only the prompt field', async () => {
    const form = new FormData();
    form.set('prompt', 'hello world');
    form.set('file', new Blob([new Uint8Array(16)]), 'a.wav');
    expect(await countPromptTokens('transcriptions', form, 'whisper-1')).toBe(2);
    expect(await countPromptTokens('images', new FormData(), 'gpt-image-1')).toBe(0);
  });

  it('has a synchronous form for hot loops', async () => {
    const c = await tokenCounter('gpt-4o');
    expect(countPromptTokensWith(c, 'speech', { input: 'hello world' })).toBe(2);
  });
});

/**
 * The longest time the event loop was kept from running while `work` ran: a setImmediate chain stamps every
 * turn it gets. Today's synchronous count of 120,000 'A's held the loop for 11-13 s.
 */
async function longestBlockMs(work: () => Promise<unknown>): Promise<number> {
  let longest = 0;
  let last = performance.now();
  let running = true;
  const tick = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  await work();
  running = false;
  longest = Math.max(longest, performance.now() - last);
  return longest;
}

describe('bounded counting (issue 13: one request froze the relay)', () => {
  const PROSE = [
    'The quick brown fox jumps over the lazy dog. ',
    "It's 12:30 -- don't you think? I'll go; they've said   so!\n",
    '  indented code: const x = foo(bar, "baz") + 42;\n\n',
    '中文句子，标点。 日本語のテキスト ',
    'emoji 😀👍🏽 and accents: café, naïve, Ångström. ',
    'tabs\tand\r\nCRLF lines, URLs like https://example.com/a?b=c&d=e. ',
  ];
  const prose = (chars: number) => {
    let s = '';
    for (let i = 0; s.length < chars; i++) s += PROSE[(i * 7) % PROSE.length];
    return s;
  };

  it('keeps the exact count of ordinary text however it is cut into segments', async () => {
    const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
    const c = await tokenCounter('gpt-4o');
    const opts = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };
    for (const chars of [10, 5_000, 50_000]) {
      const text = prose(chars);
      expect([...segments(text)].length).toBeGreaterThan(chars > 4_096 ? 1 : 0);
      expect(c.count(text), `${chars} chars`).toBe(countTokens(text, opts));
      expect(await countTextTokens(text, 'gpt-4o')).toBe(countTokens(text, opts));
    }
    const { countTokens: cl100k } = await import('gpt-tokenizer/encoding/cl100k_base');
    expect((await tokenCounter('gpt-4')).count(prose(50_000))).toBe(cl100k(prose(50_000), opts));
  });

  it('cuts runs without spaces at MAX_RUN_CHARS, never inside a surrogate pair', () => {
    const run = 'A'.repeat(1_000);
    expect([...segments(run)].every((s) => s.length <= MAX_RUN_CHARS)).toBe(true);
    expect([...segments(run)].join('')).toBe(run);
    const emoji = '😀'.repeat(300);
    const parts = [...segments(emoji)];
    expect(parts.join('')).toBe(emoji);
    for (const p of parts) expect(p.length % 2, 'whole surrogate pairs').toBe(0);
  });

  it('counts 120,000 letters without a space without blocking the event loop', async () => {
    const text = 'A'.repeat(120_000);
    let n = 0;
    const blocked = await longestBlockMs(async () => {
      n = await countTextTokens(text, 'gpt-4o');
    });
    // 8 letters per token in o200k_base, cut at 128 (a multiple of 8): the exact count.
    expect(n).toBe(15_000);
    // The work is cut into slices of about YIELD_AFTER_MS; the margin absorbs a loaded CI machine.
    expect(blocked).toBeLessThan(100);
  });

  it('counts a 1 MB prompt without spaces in a chat request without blocking, as at most its bytes', async () => {
    const body = { messages: [{ role: 'user', content: '中'.repeat(100_000) + 'A'.repeat(700_000) }] };
    let n = 0;
    const blocked = await longestBlockMs(async () => {
      n = await countPromptTokens('chat', body, 'gpt-4o');
    });
    expect(blocked).toBeLessThan(100);
    // Beyond TOKENIZE_BUDGET_CHARS the text counts as its UTF-8 bytes: an upper bound of any byte-level BPE.
    expect(n).toBe(3 + 3 + 1 + utf8Bytes(body.messages[0]!.content));
    expect(utf8Bytes('中A😀é')).toBe(3 + 1 + 4 + 2);
  });

  it('many short texts (each under the cut length) share the budget and the yields', async () => {
    const messages = Array.from({ length: 5_000 }, () => ({
      role: 'user',
      content: '中'.repeat(MAX_RUN_CHARS),
    }));
    const blocked = await longestBlockMs(() => countPromptTokens('chat', { messages }, 'gpt-4o'));
    expect(blocked).toBeLessThan(100);
  });

  it('tokenizes up to TOKENIZE_BUDGET_CHARS per call and counts the rest as bytes', async () => {
    const small = prose(1_000);
    const big = 'B'.repeat(TOKENIZE_BUDGET_CHARS);
    const c = await tokenCounter('gpt-4o');
    // The first text fits the budget and is tokenized; the second would pass it and counts as bytes.
    expect(await countTextsBounded(c, [small, big])).toBe(c.count(small) + big.length);
    expect(await countTextsBounded(c, [big])).toBe(c.count(big));
  });
});
