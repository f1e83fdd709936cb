/**
 * The priced model names of Midjourney actions as new-api names them (`mj_<action lowercased>`, `swap_face`),
 * the same names the relay charges (relay-service/src/tasks/midjourney/wire.ts modelOfAction). Client-safe.
 */
export const MIDJOURNEY_MODELS: readonly string[] = [
  'mj_imagine',
  'mj_variation',
  'mj_reroll',
  'mj_blend',
  'mj_upscale',
  'mj_describe',
  'mj_modal',
  'mj_zoom',
  'mj_custom_zoom',
  'mj_shorten',
  'mj_high_variation',
  'mj_low_variation',
  'mj_pan',
  'mj_inpaint',
  'mj_upload',
  'swap_face',
];
