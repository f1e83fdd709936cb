/** Helpers for adaptor golden tests (imported by *.test.ts only). */
import { readFileSync } from 'node:fs';
import { frameRunner } from './frames.ts';
import type { ChannelConfig, RelayInput, StreamConversion, StreamTally } from './types.ts';

export function channel(partial: Partial<ChannelConfig> = {}): ChannelConfig {
  return {
    id: 7,
    type: 1,
    name: 'test',
    key: 'sk-test',
    baseUrl: '',
    other: '',
    openaiOrganization: null,
    setting: {},
    paramOverride: {},
    ...partial,
  };
}

export function relayInput(partial: Partial<RelayInput> = {}): RelayInput {
  return {
    endpoint: 'chat',
    upstreamModel: 'gpt-4o-mini',
    stream: false,
    body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
    clientHeaders: new Headers(),
    ...partial,
  };
}

/** A fixture file of the folder `dir` (pass `import.meta.url` of the test). */
export const fixture = (base: string, name: string): Uint8Array =>
  new Uint8Array(readFileSync(new URL(`./fixtures/${name}`, base)));

export const fixtureText = (base: string, name: string): string =>
  new TextDecoder().decode(fixture(base, name));

/** Feeds chunks through a conversion; returns the client bytes and the final tally. */
export async function runStream(
  conv: StreamConversion,
  chunks: Uint8Array[],
): Promise<{ bytes: Uint8Array; text: string; tally: StreamTally }> {
  // The relay's own way of running a conversion (core/relay.ts).
  const runner = frameRunner([conv.transformer]);
  const parts = [...chunks.flatMap((c) => runner.push(c)), ...runner.end()];
  const bytes = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.byteLength;
  }
  return { bytes, text: new TextDecoder().decode(bytes), tally: conv.tally() };
}

/** Splits bytes at the given offsets. */
export function splitAt(bytes: Uint8Array, ...offsets: number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const o of [...offsets, bytes.length]) {
    out.push(bytes.subarray(prev, o));
    prev = o;
  }
  return out;
}
