/** GET /healthz: liveness of the console's HTTP side (Kubernetes probes, the e2e harness). */
export function loader() {
  return new Response('ok', {
    status: 200,
    headers: { 'Content-Type': 'text/plain', 'Cache-Control': 'no-store' },
  });
}
