import { describe, expect, it } from 'vitest';
import { carriedParams, pageHref, pageItems } from './pagination.tsx';

describe('pageHref', () => {
  it('sets the page and keeps the search and page size', () => {
    expect(pageHref('/user', '?keyword=ann&page_size=50&p=2', 3)).toBe('/user?keyword=ann&page_size=50&p=3');
    expect(pageHref('/token', '', 2)).toBe('/token?p=2');
  });

  it('encodes filter values and keeps repeated parameters', () => {
    expect(pageHref('/log', '?model_name=gpt-4o+mini&type=2&type=3', 4)).toBe(
      '/log?model_name=gpt-4o+mini&type=2&type=3&p=4',
    );
    expect(pageHref('/log', '?start=2026-11-25T08%3A00', 1)).toBe('/log?start=2026-11-25T08%3A00&p=1');
  });
});

describe('pageItems', () => {
  it('lists every page when there are few', () => {
    expect(pageItems(1, 1)).toEqual([1]);
    expect(pageItems(2, 5)).toEqual([1, 2, 3, 4, 5]);
    expect(pageItems(1, 0)).toEqual([]);
  });

  it('keeps first and last with gaps around a window of two either side', () => {
    expect(pageItems(10, 20)).toEqual([1, 'gap', 8, 9, 10, 11, 12, 'gap', 20]);
    expect(pageItems(1, 20)).toEqual([1, 2, 3, 'gap', 20]);
    expect(pageItems(20, 20)).toEqual([1, 'gap', 18, 19, 20]);
  });

  it('shows the number instead of a gap of one', () => {
    expect(pageItems(4, 20)).toEqual([1, 2, 3, 4, 5, 6, 'gap', 20]);
    expect(pageItems(17, 20)).toEqual([1, 'gap', 15, 16, 17, 18, 19, 20]);
  });

  it('clamps a page outside the range', () => {
    expect(pageItems(99, 6)).toEqual([1, 'gap', 4, 5, 6]);
    expect(pageItems(99, 30)).toEqual([1, 'gap', 28, 29, 30]);
    expect(pageItems(-3, 30)).toEqual([1, 2, 3, 'gap', 30]);
  });
});

describe('carriedParams', () => {
  it('carries every filter but the page into the jump form', () => {
    expect(carriedParams('?keyword=a&p=3&page_size=20&type=1&type=2')).toEqual([
      ['keyword', 'a'],
      ['page_size', '20'],
      ['type', '1'],
      ['type', '2'],
    ]);
    expect(carriedParams('')).toEqual([]);
  });
});
