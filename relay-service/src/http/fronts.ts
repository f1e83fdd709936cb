/**
 * Inbound API formats ("fronts"). Each model API the relay speaks (OpenAI now; Claude, Gemini, Midjourney and
 * Suno later) owns a set of paths and its error envelope, so a client always gets errors in the shape its SDK
 * parses. Routes are mounted per front; errors outside any route use the front that owns the path.
 */
import type { Hono } from 'hono';

export type FrontError = {
  status: number;
  message: string;
  /** Provider-specific error type, e.g. OpenAI's `invalid_request_error`. */
  type: string;
  code?: string | null;
  param?: string | null;
};

export interface ApiFront {
  readonly name: string;
  /** True when this front owns the path (the first matching front wins). */
  owns(pathname: string): boolean;
  /** The error response in this front's envelope. */
  error(err: FrontError): Response;
  /** Adds the front's routes (none yet). */
  mount?(app: Hono): void;
}

/** OpenAI's envelope: `{"error":{"message","type","param","code"}}`. Also the fallback for unknown paths. */
export const openAiFront: ApiFront = {
  name: 'openai',
  owns: () => true,
  error: ({ status, message, type, code = null, param = null }) =>
    Response.json({ error: { message, type, param, code } }, { status }),
};

export const defaultFronts: readonly ApiFront[] = [openAiFront];

export function frontFor(fronts: readonly ApiFront[], pathname: string): ApiFront {
  return fronts.find((f) => f.owns(pathname)) ?? openAiFront;
}
