import { describe, expect, it } from 'vitest';
import { i18next } from '#app/i18n/i18n.server.ts';
import { localizeLogContent, parsePriceContent } from './log-content.ts';

const tFor = (lng: 'zh' | 'en') => i18next.getFixedT(lng, 'logs');

describe('log content in the reader language', () => {
  it('translates the relay price text (ratio and fixed price) into Chinese', async () => {
    const zh = await tFor('zh');
    expect(localizeLogContent('model ratio 1.25, completion ratio 4, group ratio 1', zh)).toBe(
      '模型倍率 1.25，补全倍率 4，分组倍率 1',
    );
    expect(localizeLogContent('model price $0.04, group ratio 2', zh)).toBe('模型价格 $0.04，分组倍率 2');
    expect(
      localizeLogContent(
        'model ratio 0 (unpriced, self-use mode), completion ratio 1, group ratio 1, cache ratio 0.1, cache write ratio 1.25, audio ratio 16, audio completion ratio 2',
        zh,
      ),
    ).toBe(
      '模型倍率 0（未设置价格，自用模式），补全倍率 1，分组倍率 1，缓存倍率 0.1，缓存创建倍率 1.25，音频倍率 16，音频补全倍率 2',
    );
    expect(localizeLogContent('模型测试', zh)).toBe('模型测试');
  });

  it('keeps the English text in English and the channel-test mark translated', async () => {
    const en = await tFor('en');
    expect(localizeLogContent('model ratio 1.25, completion ratio 4, group ratio 1', en)).toBe(
      'model ratio 1.25, completion ratio 4, group ratio 1',
    );
    expect(localizeLogContent('模型测试', en)).toBe('Model test');
  });

  it('shows any other text as written', async () => {
    const zh = await tFor('zh');
    expect(parsePriceContent('model ratio abc, group ratio 1')).toBeNull();
    expect(localizeLogContent('管理员将用户额度从 1 修改为 2', zh)).toBe('管理员将用户额度从 1 修改为 2');
    expect(localizeLogContent('model ratio 1, something else', zh)).toBe('model ratio 1, something else');
  });
});
