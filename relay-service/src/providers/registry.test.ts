import { describe, expect, it } from 'vitest';
import { ADAPTORS, adaptorFor } from './registry.ts';

describe('adaptorFor', () => {
  it('maps OpenAI-compatible types to the OpenAI adaptor and Azure to Azure', () => {
    for (const type of [1, 4, 8, 19, 22, 25, 26, 31, 35, 38, 40, 42, 43, 45, 46]) {
      expect(adaptorFor(type)?.id, `type ${type}`).toBe('openai');
    }
    expect(adaptorFor(3)?.id).toBe('azure');
  });

  it('maps Anthropic (14) to the Claude adaptor', () => {
    expect(adaptorFor(14)?.id).toBe('anthropic');
  });

  it('maps Gemini (24) to the Gemini adaptor', () => {
    expect(adaptorFor(24)?.id).toBe('gemini');
  });

  it('maps PaLM (11), AI Proxy Library (21) and Dify (37) to their adaptors', () => {
    expect(adaptorFor(11)?.id).toBe('palm');
    expect(adaptorFor(21)?.id).toBe('aiproxy');
    expect(adaptorFor(37)?.id).toBe('dify');
  });

  it('maps AWS Bedrock Claude (33) to the aws adaptor', () => {
    expect(adaptorFor(33)?.id).toBe('aws');
  });

  it('maps Vertex AI (41) to the vertex adaptor', () => {
    expect(adaptorFor(41)?.id).toBe('vertex');
  });

  it('answers null for types without an adaptor (tasks are served outside the adaptors)', () => {
    for (const type of [2, 5, 36, 999]) expect(adaptorFor(type), `type ${type}`).toBeNull();
  });

  it('has one adaptor per type and unique ids', () => {
    const types = ADAPTORS.flatMap((a) => a.channelTypes);
    expect(new Set(types).size).toBe(types.length);
    expect(new Set(ADAPTORS.map((a) => a.id)).size).toBe(ADAPTORS.length);
  });
});
