/** Only same-origin absolute paths (no `//host`, no backslash tricks); anything else falls back. */
export function safeRedirect(value: unknown, fallback = '/token'): string {
  if (typeof value !== 'string' || !value.startsWith('/') || value.startsWith('//') || value.includes('\\'))
    return fallback;
  if (/^\/(login|register|reset)(\/|\?|$)/.test(value)) return fallback;
  return value;
}
