/**
 * OpenAI chat → Dify `POST /v1/chat-messages` (https://docs.dify.ai, "Send Chat Message"): `{inputs, query,
 * response_mode: blocking|streaming, user, conversation_id?, files?, auto_generate_name}`.
 *
 * Conversations: Dify keeps a conversation's history itself. A client continues one by sending the
 * `conversation_id` the previous answer carried (an extra body field, read here; answers return it as their `id`
 * and as `conversation_id`). Then only the last user message is the query, since Dify already has the earlier
 * turns. Without one, a new conversation starts and the whole OpenAI transcript becomes the query, each message
 * under a `SYSTEM:` / `USER:` / `ASSISTANT:` header line, the way new-api builds it.
 *
 * `user` is the client's `user` (Dify scopes conversations to it, so continuing one needs the same user), else
 * "switchyard". `inputs` is the client's `inputs` object when it sends one (app variables), else {}. Image parts
 * with an http(s) URL go as `files` with transfer_mode remote_url; inline data URLs would need an upload call
 * (I/O) and are dropped.
 */

import { isObject, type Obj, str } from '../json.ts';
import { chatTexts } from '../plain-chat.ts';
import type { RelayInput } from '../types.ts';

export const DIFY_DEFAULT_BASE = 'https://api.dify.ai';
export const DIFY_DEFAULT_USER = 'switchyard';

const HEADERS: Record<string, string> = { system: 'SYSTEM', developer: 'SYSTEM', assistant: 'ASSISTANT' };

function remoteImages(body: Obj): Obj[] {
  const files: Obj[] = [];
  for (const m of Array.isArray(body.messages) ? body.messages : []) {
    if (!isObject(m) || !Array.isArray(m.content)) continue;
    for (const p of m.content) {
      if (!isObject(p) || p.type !== 'image_url') continue;
      const url = isObject(p.image_url) ? str(p.image_url.url) : str(p.image_url);
      if (/^https?:\/\//.test(url)) files.push({ type: 'image', transfer_mode: 'remote_url', url });
    }
  }
  return files;
}

export function buildDifyBody(input: RelayInput): Obj {
  const body = input.body instanceof FormData ? {} : input.body;
  const conversationId = str(body.conversation_id);
  const messages = chatTexts(input);
  const query = conversationId
    ? ([...messages].reverse().find((m) => m.role === 'user')?.text ?? '')
    : messages.map((m) => `${HEADERS[m.role] ?? 'USER'}: \n${m.text}\n`).join('');
  const out: Obj = {
    inputs: isObject(body.inputs) ? body.inputs : {},
    query,
    response_mode: input.stream ? 'streaming' : 'blocking',
    user: str(body.user) || DIFY_DEFAULT_USER,
    auto_generate_name: false,
  };
  if (conversationId) out.conversation_id = conversationId;
  const files = remoteImages(body);
  if (files.length) out.files = files;
  return out;
}
