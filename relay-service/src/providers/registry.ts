/**
 * Channel type → adaptor. Adding a provider: its folder under providers/ and one line in ADAPTORS.
 */
import { aiproxyAdaptor } from './aiproxy/adaptor.ts';
import { aliAdaptor } from './ali/adaptor.ts';
import { anthropicAdaptor } from './anthropic/adaptor.ts';
import { awsAdaptor } from './aws/adaptor.ts';
import { azureAdaptor } from './azure/adaptor.ts';
import { baiduAdaptor } from './baidu/adaptor.ts';
import { cloudflareAdaptor } from './cloudflare/adaptor.ts';
import { cohereAdaptor } from './cohere/adaptor.ts';
import { difyAdaptor } from './dify/adaptor.ts';
import { geminiAdaptor } from './gemini/adaptor.ts';
import { mokaaiAdaptor } from './mokaai/adaptor.ts';
import { openaiAdaptor } from './openai/adaptor.ts';
import { palmAdaptor } from './palm/adaptor.ts';
import { tencentAdaptor } from './tencent/adaptor.ts';
import type { ProviderAdaptor } from './types.ts';
import { vertexAdaptor } from './vertex/adaptor.ts';
import { xunfeiAdaptor } from './xunfei/adaptor.ts';
import { zhipuAdaptor } from './zhipu/adaptor.ts';

export const ADAPTORS: readonly ProviderAdaptor[] = [
  openaiAdaptor,
  azureAdaptor,
  anthropicAdaptor,
  geminiAdaptor,
  palmAdaptor,
  aiproxyAdaptor,
  difyAdaptor,
  cohereAdaptor,
  cloudflareAdaptor,
  mokaaiAdaptor,
  aliAdaptor,
  awsAdaptor,
  vertexAdaptor,
  xunfeiAdaptor,
  baiduAdaptor,
  zhipuAdaptor,
  tencentAdaptor,
];

const byType = new Map<number, ProviderAdaptor>();
for (const adaptor of ADAPTORS) {
  for (const type of adaptor.channelTypes) {
    // Two adaptors claiming one type is a programming error; fail at load, not on some request.
    if (byType.has(type))
      throw new Error(`channel type ${type} claimed by ${byType.get(type)!.id} and ${adaptor.id}`);
    byType.set(type, adaptor);
  }
}

/** The adaptor serving a channel type, or null when Switchyard does not relay to that type (yet). */
export function adaptorFor(channelType: number): ProviderAdaptor | null {
  return byType.get(channelType) ?? null;
}
