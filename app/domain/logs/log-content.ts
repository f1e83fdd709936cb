/**
 * A consume log's `content` is written by the relay in one fixed English form (relay-service
 * core/pricing.ts priceContent: "model ratio 1.25, completion ratio 4, group ratio 1"), and a channel test's
 * by Billing as '模型测试'. The page shows them in the reader's language; any other text is shown as written.
 */
import type { TFunction } from 'i18next';
import { CHANNEL_TEST_CONTENT } from '#app/domain/logs/constants.ts';

export type ContentPart =
  | { key: 'modelPrice'; value: string }
  | { key: 'unpriced' }
  | {
      key:
        | 'modelRatio'
        | 'completionRatio'
        | 'groupRatio'
        | 'cacheRatio'
        | 'cacheWriteRatio'
        | 'audioRatio'
        | 'audioCompletionRatio';
      value: string;
    };

const NUMBER = '(-?\\d+(?:\\.\\d+)?(?:e[-+]?\\d+)?)';
const PATTERNS: [RegExp, (m: RegExpExecArray) => ContentPart][] = [
  [new RegExp(`^model price \\$${NUMBER}$`), (m) => ({ key: 'modelPrice', value: `$${m[1] ?? ''}` })],
  [/^model ratio 0 \(unpriced, self-use mode\)$/, () => ({ key: 'unpriced' })],
  [new RegExp(`^model ratio ${NUMBER}$`), (m) => ({ key: 'modelRatio', value: m[1] ?? '' })],
  [new RegExp(`^completion ratio ${NUMBER}$`), (m) => ({ key: 'completionRatio', value: m[1] ?? '' })],
  [new RegExp(`^group ratio ${NUMBER}$`), (m) => ({ key: 'groupRatio', value: m[1] ?? '' })],
  [new RegExp(`^cache ratio ${NUMBER}$`), (m) => ({ key: 'cacheRatio', value: m[1] ?? '' })],
  [new RegExp(`^cache write ratio ${NUMBER}$`), (m) => ({ key: 'cacheWriteRatio', value: m[1] ?? '' })],
  [new RegExp(`^audio ratio ${NUMBER}$`), (m) => ({ key: 'audioRatio', value: m[1] ?? '' })],
  [
    new RegExp(`^audio completion ratio ${NUMBER}$`),
    (m) => ({ key: 'audioCompletionRatio', value: m[1] ?? '' }),
  ],
];

/** The relay's price text as parts, or null when the text is anything else (shown unchanged). */
export function parsePriceContent(content: string): ContentPart[] | null {
  // ', ' outside parentheses (the unpriced mark has a comma of its own)
  const pieces = content.split(/, (?![^(]*\))/);
  const parts: ContentPart[] = [];
  for (const piece of pieces) {
    const hit = PATTERNS.map(([re, make]) => {
      const m = re.exec(piece.trim());
      return m ? make(m) : null;
    }).find((p) => p !== null);
    if (!hit) return null;
    parts.push(hit);
  }
  return parts.length ? parts : null;
}

/** The log content in the reader's language (logs namespace `content.*`). */
export function localizeLogContent(content: string, t: TFunction<'logs'>): string {
  if (content === CHANNEL_TEST_CONTENT) return t('content.channelTest');
  const parts = parsePriceContent(content);
  if (!parts) return content;
  return parts
    .map((p) => (p.key === 'unpriced' ? t('content.unpriced') : t(`content.${p.key}`, { value: p.value })))
    .join(t('content.separator'));
}
