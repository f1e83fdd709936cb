import type { LoaderFunctionArgs } from '@remix-run/node';
import { getPublicStatus } from '#app/domain/status/status.server.ts';
import { getServices } from '#app/services.server.ts';
import { envelope, ok } from '#app/utils/envelope.server.ts';

/** GET /api/status: the public status object (no secrets), `{ success, message, data }`. */
export function loader({ context }: LoaderFunctionArgs) {
  return envelope(() => ok(getPublicStatus(getServices(context))));
}
