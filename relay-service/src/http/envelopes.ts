/**
 * The error envelope of a model API path without the fronts' services: what the console's forwarding uses when
 * it answers for the relay (a body over RELAY_MAX_BODY_BYTES), so the client's SDK parses it as the relay's.
 */
import { claudeError, isClaudePath } from './claude.ts';
import type { FrontError } from './fronts.ts';
import { geminiError, isGeminiPath } from './gemini.ts';
import { isMidjourneyPath, midjourneyFrontError } from './midjourney-envelope.ts';
import { openAiError } from './openai.ts';
import { isSunoPath, sunoFrontError } from './suno-envelope.ts';

export function envelopeFor(pathname: string): (e: FrontError) => Response {
  if (isClaudePath(pathname)) return claudeError;
  if (isGeminiPath(pathname)) return geminiError;
  if (isMidjourneyPath(pathname)) return midjourneyFrontError;
  if (isSunoPath(pathname)) return sunoFrontError;
  return openAiError;
}
