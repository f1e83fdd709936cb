import { createInstance } from 'i18next';
import { renderToString } from 'react-dom/server';
import { I18nextProvider } from 'react-i18next';
import { describe, expect, it } from 'vitest';
import { isNewYearsDay } from '#app/domain/navigation/menu.ts';
import { i18nConfig } from '#app/i18n/config.ts';
import { resources } from '#app/i18n/resources.ts';
import { NewYearEgg } from './new-year.tsx';

describe('new-year easter egg', () => {
  it('shows on 1 January only (menu.ts)', () => {
    expect(isNewYearsDay(new Date(2027, 0, 1, 9))).toBe(true);
    expect(isNewYearsDay(new Date(2026, 11, 31, 23))).toBe(false);
  });

  it('is a keyboard-usable disclosure with a translated greeting and CSS the HTML parser keeps intact', async () => {
    const i18n = createInstance();
    await i18n.init({ ...i18nConfig, lng: 'zh', ns: ['common', 'content'], resources });
    const html = renderToString(
      <I18nextProvider i18n={i18n}>
        <NewYearEgg />
      </I18nextProvider>,
    );
    expect(html).toContain('<details');
    expect(html).toContain('<summary aria-label="新年彩蛋"');
    expect(html).toContain('新年快乐！愿新的一年一切顺利！');
    // React escapes the text of <style>; a quote or '>' in the CSS would break its selectors
    const css = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1] ?? '';
    expect(css).not.toMatch(/&(gt|lt|quot|#x27|amp);/);
  });
});
