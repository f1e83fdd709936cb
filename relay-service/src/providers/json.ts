/**
 * Readers for untrusted JSON shared by every adaptor and bridge: upstream and client bodies are `unknown`
 * until each field is checked.
 */
export type Obj = Record<string, unknown>;

export const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The string, or '' for anything else. */
export const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The finite number, or 0 for anything else. */
export const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
