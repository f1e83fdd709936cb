/**
 * Claude model names → Bedrock model ids, and the cross-region inference profiles (us. / eu. / apac.) some models
 * are only reachable through. The table follows new-api's aws channel (relay/channel/aws/constants.go), which
 * tracks AWS's "Supported foundation models" and "Supported Regions and models for inference profiles" pages.
 * A name that is not in the table is taken as a Bedrock model id already (an admin's model mapping, a newer model).
 */

export const BEDROCK_MODEL_IDS: Readonly<Record<string, string>> = {
  'claude-3-sonnet-20240229': 'anthropic.claude-3-sonnet-20240229-v1:0',
  'claude-3-opus-20240229': 'anthropic.claude-3-opus-20240229-v1:0',
  'claude-3-haiku-20240307': 'anthropic.claude-3-haiku-20240307-v1:0',
  'claude-3-5-sonnet-20240620': 'anthropic.claude-3-5-sonnet-20240620-v1:0',
  'claude-3-5-sonnet-20241022': 'anthropic.claude-3-5-sonnet-20241022-v2:0',
  'claude-3-5-haiku-20241022': 'anthropic.claude-3-5-haiku-20241022-v1:0',
  'claude-3-7-sonnet-20250219': 'anthropic.claude-3-7-sonnet-20250219-v1:0',
  'claude-sonnet-4-20250514': 'anthropic.claude-sonnet-4-20250514-v1:0',
  'claude-opus-4-20250514': 'anthropic.claude-opus-4-20250514-v1:0',
  'claude-opus-4-1-20250805': 'anthropic.claude-opus-4-1-20250805-v1:0',
  'claude-sonnet-4-5-20250929': 'anthropic.claude-sonnet-4-5-20250929-v1:0',
  'claude-haiku-4-5-20251001': 'anthropic.claude-haiku-4-5-20251001-v1:0',
  'claude-opus-4-5-20251101': 'anthropic.claude-opus-4-5-20251101-v1:0',
};

type Geo = 'us' | 'eu' | 'ap';
const ALL: readonly Geo[] = ['us', 'eu', 'ap'];
const US: readonly Geo[] = ['us'];
const US_AP: readonly Geo[] = ['us', 'ap'];

/** Bedrock model id → the geographies whose regions reach it through a cross-region inference profile. */
const CROSS_REGION: Readonly<Record<string, readonly Geo[]>> = {
  'anthropic.claude-3-sonnet-20240229-v1:0': ALL,
  'anthropic.claude-3-opus-20240229-v1:0': US,
  'anthropic.claude-3-haiku-20240307-v1:0': ALL,
  'anthropic.claude-3-5-sonnet-20240620-v1:0': ALL,
  'anthropic.claude-3-5-sonnet-20241022-v2:0': US_AP,
  'anthropic.claude-3-5-haiku-20241022-v1:0': US,
  'anthropic.claude-3-7-sonnet-20250219-v1:0': ALL,
  'anthropic.claude-sonnet-4-20250514-v1:0': ALL,
  'anthropic.claude-opus-4-20250514-v1:0': US,
  'anthropic.claude-opus-4-1-20250805-v1:0': US,
  'anthropic.claude-sonnet-4-5-20250929-v1:0': ALL,
  'anthropic.claude-haiku-4-5-20251001-v1:0': ALL,
  'anthropic.claude-opus-4-5-20251101-v1:0': ALL,
};

/** The inference profile prefix of a geography: Asia-Pacific regions (ap-*) use `apac.`. */
const PROFILE_PREFIX: Readonly<Record<Geo, string>> = { us: 'us', eu: 'eu', ap: 'apac' };

/**
 * The model id to invoke from `region`: the Bedrock id of a Claude name, prefixed with the region's inference
 * profile (e.g. `us.anthropic.claude-3-7-sonnet-20250219-v1:0` from us-east-1) when the model has one there.
 */
export function bedrockModelId(model: string, region: string): string {
  const id = Object.hasOwn(BEDROCK_MODEL_IDS, model) ? BEDROCK_MODEL_IDS[model]! : model;
  const geo = region.split('-')[0] as Geo;
  return Object.hasOwn(CROSS_REGION, id) && CROSS_REGION[id]!.includes(geo)
    ? `${PROFILE_PREFIX[geo]}.${id}`
    : id;
}
