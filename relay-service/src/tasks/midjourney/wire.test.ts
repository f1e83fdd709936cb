import { describe, expect, it } from 'vitest';
import { MidjourneyService, MjError, submitPath } from './service.ts';
import {
  actionOfCustomId,
  clearMode,
  modelOfAction,
  parseSubmitAnswer,
  parseUpstreamTask,
  type TaskRow,
  taskDto,
} from './wire.ts';

describe('midjourney wire', () => {
  it('maps buttons to actions and actions to new-api model names', () => {
    const cases: [string, string | null, string | null][] = [
      ['MJ::JOB::upsample::1::abc', 'UPSCALE', 'mj_upscale'],
      ['MJ::JOB::upsample_v6_2x_subtle::1::abc::SOLO', 'UPSCALE', 'mj_upscale'],
      ['MJ::JOB::variation::3::abc', 'VARIATION', 'mj_variation'],
      ['MJ::JOB::reroll::0::abc::SOLO', 'REROLL', 'mj_reroll'],
      ['MJ::Outpaint::50::1::abc::SOLO', 'ZOOM', 'mj_zoom'],
      ['MJ::CustomZoom::abc', 'CUSTOM_ZOOM', 'mj_custom_zoom'],
      ['MJ::Inpaint::1::abc::SOLO', 'INPAINT', 'mj_inpaint'],
      ['MJ::JOB::pan_left::1::abc::SOLO', 'PAN', 'mj_pan'],
      ['MJ::JOB::low_variation::1::abc::SOLO', 'LOW_VARIATION', 'mj_low_variation'],
      ['MJ::JOB::high_variation::1::abc::SOLO', 'HIGH_VARIATION', 'mj_high_variation'],
      ['MJ::something::else', null, null],
    ];
    for (const [customId, action, model] of cases) {
      expect(actionOfCustomId(customId)).toBe(action);
      if (action) expect(modelOfAction(action)).toBe(model);
    }
    expect(modelOfAction('SWAP_FACE')).toBe('swap_face');
  });

  it('names the action and the original task of each submit kind', () => {
    expect(MidjourneyService.actionOf('imagine', { prompt: 'x' })).toEqual({
      action: 'IMAGINE',
      taskId: null,
    });
    expect(MidjourneyService.actionOf('simple-change', { content: '123 U2' })).toEqual({
      action: 'UPSCALE',
      taskId: '123',
    });
    expect(MidjourneyService.actionOf('simple-change', { content: '123 r' }).action).toBe('REROLL');
    expect(MidjourneyService.actionOf('change', { taskId: '9', action: 'variation' })).toEqual({
      action: 'VARIATION',
      taskId: '9',
    });
    expect(MidjourneyService.actionOf('modal', { taskId: '9' })).toEqual({ action: 'MODAL', taskId: '9' });
    expect(() => MidjourneyService.actionOf('imagine', {})).toThrow(MjError);
    expect(
      MidjourneyService.actionOf('insight-face/swap', { sourceBase64: 'data:a', targetBase64: 'data:b' }),
    ).toEqual({ action: 'SWAP_FACE', taskId: null });
    expect(() => MidjourneyService.actionOf('insight-face/swap', { sourceBase64: 'data:a' })).toThrow(
      MjError,
    );
    expect(submitPath('insight-face/swap')).toBe('/mj/insight-face/swap');
    expect(submitPath('imagine')).toBe('/mj/submit/imagine');
    expect(() => MidjourneyService.actionOf('action', { taskId: '1', customId: 'nope' })).toThrow(
      'unknown customId',
    );
    expect(() => MidjourneyService.actionOf('change', { taskId: '1', action: 'PAN' })).toThrow(MjError);
  });

  it('reads submit answers and task objects defensively', () => {
    expect(parseSubmitAnswer('{"code":1,"description":"ok","result":"123","properties":{"a":1}}')).toEqual({
      code: 1,
      description: 'ok',
      result: '123',
      properties: { a: 1 },
    });
    expect(parseSubmitAnswer('{"code":24,"description":"banned"}')).toMatchObject({ code: 24, result: null });
    expect(parseSubmitAnswer('<html>')).toBeNull();
    expect(parseSubmitAnswer('{"description":"no code"}')).toBeNull();
    expect(parseUpstreamTask({ id: 7, status: 'SUCCESS', progress: '100%', submitTime: 1.5 })).toMatchObject({
      id: '7',
      status: 'SUCCESS',
      submitTime: 1,
      imageUrl: '',
    });
    expect(parseUpstreamTask({ status: 'SUCCESS' })).toBeNull();
    expect(parseUpstreamTask([1])).toBeNull();
  });

  it('clears mode flags and renders a row as the proxy task shape', () => {
    expect(clearMode('a cat --fast --v 6 --relax')).toBe('a cat --v 6');
    expect(clearMode('--turbo a cat')).toBe('a cat');
    const row = {
      mjId: '42',
      action: 'IMAGINE',
      prompt: 'p',
      promptEn: 'p',
      description: '',
      state: 's',
      submitTime: 1,
      startTime: 2,
      finishTime: 3,
      imageUrl: 'https://i',
      status: 'SUCCESS',
      progress: '100%',
      failReason: '',
      buttons: '[{"customId":"x"}]',
      properties: 'not json',
    } as TaskRow;
    expect(taskDto(row, 'https://gw/mj/image/42')).toMatchObject({
      id: '42',
      imageUrl: 'https://gw/mj/image/42',
      buttons: [{ customId: 'x' }],
      properties: {},
    });
  });
});
