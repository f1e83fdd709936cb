import { createContext, useContext } from 'react';

/**
 * The Content-Security-Policy nonce of this page (ADR 032). entry.server.tsx makes one per request, sends it in
 * the header and provides it here; every inline or parser-inserted `<script>` the page renders carries it
 * (root.tsx passes it to Remix's <Scripts> and <ScrollRestoration>). In the browser it is '' (browsers hide the
 * attribute after load, and scripts React creates later do not run through the parser anyway).
 */
export const NonceContext = createContext('');

export function useNonce(): string {
  return useContext(NonceContext);
}
