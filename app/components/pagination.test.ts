import { describe, expect, it } from 'vitest';
import { pageHref } from './pagination.tsx';

describe('pageHref', () => {
  it('sets the page and keeps the search and page size', () => {
    expect(pageHref('/user', '?keyword=ann&page_size=50&p=2', 3)).toBe('/user?keyword=ann&page_size=50&p=3');
    expect(pageHref('/token', '', 2)).toBe('/token?p=2');
  });
});
