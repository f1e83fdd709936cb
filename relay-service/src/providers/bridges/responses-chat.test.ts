import { describe, expect, it } from 'vitest';
import { frameRunner } from '../frames.ts';
import {
  chatStreamToResponses,
  chatToResponses,
  responsesRefusal,
  responsesToChat,
} from './responses-chat.ts';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Runs chat SSE chunks through the stream bridge; returns the Responses events as parsed objects. */
function streamEvents(chunks: unknown[], request = {}): Record<string, unknown>[] {
  const runner = frameRunner([chatStreamToResponses('m', request)]);
  const out: Uint8Array[] = [];
  for (const c of chunks)
    out.push(...runner.push(enc.encode(`data: ${typeof c === 'string' ? c : JSON.stringify(c)}\n\n`)));
  out.push(...runner.end());
  const text = out.map((b) => dec.decode(b)).join('');
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      const [eventLine, dataLine] = block.split('\n');
      const data = JSON.parse(dataLine!.slice('data: '.length));
      expect(eventLine).toBe(`event: ${data.type}`);
      return data;
    });
}

describe('responsesToChat', () => {
  it('turns input items into chat messages: roles, parts, calls joined to their assistant turn, outputs', () => {
    const chat = responsesToChat(
      {
        model: 'm',
        instructions: 'Sys.',
        input: [
          { role: 'developer', content: 'Dev rule.' },
          {
            type: 'message',
            role: 'user',
            content: [
              { type: 'input_text', text: 'Look:' },
              { type: 'input_image', image_url: 'data:image/png;base64,AAA', detail: 'low' },
            ],
          },
          { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'hmm' }] },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
          { type: 'function_call', call_id: 'c1', name: 'a', arguments: '{"x":1}' },
          { type: 'function_call', call_id: 'c2', name: 'b', arguments: '' },
          { type: 'function_call_output', call_id: 'c1', output: 'one' },
          { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'two' }] },
        ],
        tools: [
          { type: 'function', name: 'a', parameters: { type: 'object', properties: {} }, strict: true },
          { type: 'web_search' },
        ],
        tool_choice: { type: 'function', name: 'a' },
        parallel_tool_calls: false,
        max_output_tokens: 50,
        reasoning: { effort: 'high', summary: 'auto' },
        text: { format: { type: 'json_object' } },
        store: true,
      },
      true,
    );
    expect(chat.messages).toEqual([
      { role: 'system', content: 'Sys.' },
      { role: 'system', content: 'Dev rule.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look:' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAA', detail: 'low' } },
        ],
      },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'a', arguments: '{"x":1}' } },
          { id: 'c2', type: 'function', function: { name: 'b', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'one' },
      { role: 'tool', tool_call_id: 'c2', content: 'two' },
    ]);
    expect(chat.tools).toEqual([
      {
        type: 'function',
        function: { name: 'a', parameters: { type: 'object', properties: {} }, strict: true },
      },
    ]);
    expect(chat).toMatchObject({
      tool_choice: { type: 'function', function: { name: 'a' } },
      parallel_tool_calls: false,
      max_tokens: 50,
      reasoning_effort: 'high',
      response_format: { type: 'json_object' },
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(chat.store).toBeUndefined();
  });

  it('refuses what needs stored state', () => {
    expect(responsesRefusal({ previous_response_id: 'resp_1' })?.param).toBe('previous_response_id');
    expect(responsesRefusal({ conversation: 'conv_1' })?.param).toBe('conversation');
    expect(responsesRefusal({ input: [{ type: 'item_reference', id: 'msg_1' }] })?.param).toBe('input');
    expect(responsesRefusal({ input: 'hi', store: true })).toBeNull();
  });
});

describe('chatToResponses', () => {
  it('marks a length stop incomplete and keeps refusals and usage details', () => {
    const res = JSON.parse(
      chatToResponses(
        JSON.stringify({
          id: 'chatcmpl-abc',
          created: 1_700_000_000,
          choices: [{ message: { content: 'Hi', refusal: 'no' }, finish_reason: 'length' }],
          usage: {
            prompt_tokens: 10,
            completion_tokens: 5,
            prompt_tokens_details: { cached_tokens: 4 },
            completion_tokens_details: { reasoning_tokens: 2 },
          },
        }),
        'client-model',
        { max_output_tokens: 5 },
      ),
    );
    expect(res).toMatchObject({
      id: 'resp_abc',
      object: 'response',
      created_at: 1_700_000_000,
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      model: 'client-model',
      max_output_tokens: 5,
      store: false,
      usage: {
        input_tokens: 10,
        input_tokens_details: { cached_tokens: 4 },
        output_tokens: 5,
        output_tokens_details: { reasoning_tokens: 2 },
        total_tokens: 15,
      },
    });
    expect(res.output[0].content).toEqual([
      { type: 'output_text', text: 'Hi', annotations: [], logprobs: [] },
      { type: 'refusal', refusal: 'no' },
    ]);
  });
});

describe('chatStreamToResponses', () => {
  it('keeps interleaved tool-call fragments apart and closes every item before response.completed', () => {
    const events = streamEvents([
      {
        id: 'chatcmpl-x',
        choices: [
          { delta: { tool_calls: [{ index: 0, id: 'c0', function: { name: 'a', arguments: '{"p"' } }] } },
        ],
      },
      {
        id: 'chatcmpl-x',
        choices: [
          { delta: { tool_calls: [{ index: 1, id: 'c1', function: { name: 'b', arguments: '{' } }] } },
        ],
      },
      {
        id: 'chatcmpl-x',
        choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: ':1}' } }] } }],
      },
      {
        id: 'chatcmpl-x',
        choices: [
          {
            delta: { tool_calls: [{ index: 1, function: { arguments: '}' } }] },
            finish_reason: 'tool_calls',
          },
        ],
      },
      { id: 'chatcmpl-x', choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } },
      '[DONE]',
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const completed = events.at(-1)!;
    expect(completed.type).toBe('response.completed');
    const response = completed.response as {
      output: Record<string, unknown>[];
      usage: Record<string, unknown>;
    };
    expect(response.output).toEqual([
      {
        type: 'function_call',
        id: 'fc_x_0',
        call_id: 'c0',
        name: 'a',
        arguments: '{"p":1}',
        status: 'completed',
      },
      { type: 'function_call', id: 'fc_x_1', call_id: 'c1', name: 'b', arguments: '{}', status: 'completed' },
    ]);
    expect(response.usage).toMatchObject({ input_tokens: 3, output_tokens: 4, total_tokens: 7 });
    expect(events.filter((e) => e.type === 'response.output_item.done')).toHaveLength(2);
  });

  it('turns an upstream error chunk into an error event and ends there', () => {
    const events = streamEvents([
      { id: 'chatcmpl-y', choices: [{ delta: { content: 'Hi' } }] },
      { error: { message: 'overloaded', type: 'server_error' } },
      { id: 'chatcmpl-y', choices: [{ delta: { content: 'more' } }] },
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'error', code: 'server_error', message: 'overloaded' });
    expect(events.some((e) => e.type === 'response.completed')).toBe(false);
  });

  it('answers response.incomplete when the upstream hit its token limit', () => {
    const events = streamEvents([
      { id: 'chatcmpl-z', choices: [{ delta: { content: 'Hi' }, finish_reason: 'length' }] },
      '[DONE]',
    ]);
    expect(events.at(-1)).toMatchObject({
      type: 'response.incomplete',
      response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } },
    });
  });
});
