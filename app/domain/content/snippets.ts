/**
 * First-call examples for /guide, built from this site's address and a model it serves. The values are
 * admin-set strings, so each is quoted for the language it lands in (JSON/JS/Python string literals via
 * JSON.stringify, shell words in single quotes).
 */
import type { PricingEntry } from '#app/domain/pricing/pricing.server.ts';

export type Snippets = {
  env: string;
  curl: string;
  python: string;
  javascript: string;
  stream: string;
  listModels: string;
};

/** Used in the examples while the site serves no model at all (the page says so). */
export const FALLBACK_MODEL = 'gpt-4o-mini';

/** Models that do not answer /v1/chat/completions, so they make poor first examples. */
const NOT_CHAT =
  /embed|dall-e|image|tts|whisper|moderation|rerank|midjourney|mj_|suno|flux|sora|kling|video/i;

/**
 * The model of the examples: gpt-4o-mini (the playground's default) when served, else the first chat-like model
 * billed by usage in the pricing order, else the first model; null when none is served.
 */
export function pickExampleModel(entries: readonly PricingEntry[]): string | null {
  if (entries.some((e) => e.model_name === FALLBACK_MODEL)) return FALLBACK_MODEL;
  const chat = entries.find((e) => e.quota_type === 0 && !NOT_CHAT.test(e.model_name));
  return (chat ?? entries[0])?.model_name ?? null;
}

/** A shell word: single-quoted, with embedded single quotes closed, escaped and reopened. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

const str = (value: string) => JSON.stringify(value);

export function guideSnippets(address: string, model: string): Snippets {
  const base = `${address}/v1`;
  const body = (stream: boolean) =>
    JSON.stringify(
      {
        model,
        messages: [{ role: 'user', content: 'Hello!' }],
        ...(stream ? { stream: true } : {}),
      },
      null,
      2,
    );
  const curl = (path: string, json: string, extra = '') =>
    [
      `curl ${shellQuote(`${base}${path}`)}${extra} \\`,
      `  -H 'Content-Type: application/json' \\`,
      `  -H "Authorization: Bearer $OPENAI_API_KEY" \\`,
      `  -d ${shellQuote(json)}`,
    ].join('\n');
  return {
    env: 'export OPENAI_API_KEY=sk-...',
    curl: curl('/chat/completions', body(false)),
    stream: curl('/chat/completions', body(true), ' -N'),
    listModels: `curl ${shellQuote(`${base}/models`)} \\\n  -H "Authorization: Bearer $OPENAI_API_KEY"`,
    python: [
      'import os',
      'from openai import OpenAI',
      '',
      'client = OpenAI(',
      `    base_url=${str(base)},`,
      '    api_key=os.environ["OPENAI_API_KEY"],',
      ')',
      '',
      'completion = client.chat.completions.create(',
      `    model=${str(model)},`,
      '    messages=[{"role": "user", "content": "Hello!"}],',
      ')',
      'print(completion.choices[0].message.content)',
    ].join('\n'),
    javascript: [
      "import OpenAI from 'openai';",
      '',
      'const client = new OpenAI({',
      `  baseURL: ${str(base)},`,
      '  apiKey: process.env.OPENAI_API_KEY,',
      '});',
      '',
      'const completion = await client.chat.completions.create({',
      `  model: ${str(model)},`,
      "  messages: [{ role: 'user', content: 'Hello!' }],",
      '});',
      'console.log(completion.choices[0].message.content);',
    ].join('\n'),
  };
}
