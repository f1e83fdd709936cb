/**
 * The Midjourney paths and their error envelope (new-api's `{"description","type","code"}`), apart from the
 * front so the console's forwarding (envelopes.ts) can answer in it without loading the task services.
 */
import type { FrontError } from './fronts.ts';

/** `/mj/...` and the mode prefixes `/mj-fast/mj/...`, `/mj-turbo/mj/...`, `/mj-relax/mj/...`. */
const OWNED = /^\/(?:mj|mj-fast\/mj|mj-turbo\/mj|mj-relax\/mj)(?:\/|$)/;

export function isMidjourneyPath(pathname: string): boolean {
  return OWNED.test(pathname);
}

export function midjourneyError(e: {
  status: number;
  description: string;
  type: string;
  code: number | string;
}): Response {
  return Response.json({ description: e.description, type: e.type, code: e.code }, { status: e.status });
}

/** A front error (body limits, unknown paths) in the Midjourney envelope. */
export function midjourneyFrontError(e: FrontError): Response {
  return midjourneyError({ status: e.status, description: e.message, type: e.type, code: e.code ?? 4 });
}
