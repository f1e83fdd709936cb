import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FOOTER_POLL_MS, FOOTER_POLLS, pollStatus } from './footer.tsx';

const answer = (body: unknown) => Promise.resolve(new Response(JSON.stringify(body)));

describe('pollStatus (footer refresh, seed 001 §9: 5 polls at 200 ms)', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('polls /api/status 200 ms apart, at most 5 times, until an answer carries the status', async () => {
    expect([FOOTER_POLLS, FOOTER_POLL_MS]).toEqual([5, 200]);
    const fetchFn = vi.fn(() => answer({ success: false }));
    const onStatus = vi.fn();
    pollStatus(onStatus, FOOTER_POLLS, FOOTER_POLL_MS, fetchFn as unknown as typeof fetch);
    await vi.advanceTimersByTimeAsync(199);
    expect(fetchFn).toHaveBeenCalledTimes(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(fetchFn).toHaveBeenCalledTimes(1);
    expect(fetchFn).toHaveBeenCalledWith('/api/status', expect.anything());
    await vi.advanceTimersByTimeAsync(5_000);
    expect(fetchFn).toHaveBeenCalledTimes(5);
    expect(onStatus).not.toHaveBeenCalled();
  });

  it('hands over the footer of the first good answer and stops', async () => {
    const fetchFn = vi
      .fn()
      .mockImplementationOnce(() => Promise.reject(new Error('offline')))
      .mockImplementation(() => answer({ success: true, data: { footer_html: '<b>new</b>' } }));
    const onStatus = vi.fn();
    pollStatus(onStatus, 5, 200, fetchFn as unknown as typeof fetch);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(fetchFn).toHaveBeenCalledTimes(2);
    expect(onStatus).toHaveBeenCalledExactlyOnceWith({ footer_html: '<b>new</b>' });
  });

  it('stops when the footer unmounts', async () => {
    const fetchFn = vi.fn(() => answer({ success: false }));
    const stop = pollStatus(vi.fn(), 5, 200, fetchFn as unknown as typeof fetch);
    await vi.advanceTimersByTimeAsync(450);
    stop();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(fetchFn).toHaveBeenCalledTimes(2);
  });
});
