import type { ActionFunctionArgs } from '@remix-run/node';
import { openAIError, playgroundChat } from '#app/domain/playground/playground.server.ts';

/** GET is not part of the API: an OpenAI-shaped 405 rather than an HTML page. */
export function loader() {
  return openAIError(405, 'method not allowed', 'invalid_request_error');
}

/** POST /pg/chat/completions: the playground's chat call (session only), streamed or not. */
export function action({ request, context }: ActionFunctionArgs) {
  return playgroundChat(request, context);
}
