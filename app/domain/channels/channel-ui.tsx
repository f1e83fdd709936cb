import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ListErrorBoundary } from '#app/components/list/error-boundary.tsx';
import { Button } from '#app/components/ui/button.tsx';
import {
  CHANNEL_TYPES,
  type ChannelTypeOption,
  channelStatusKey,
  formatTime,
  keyHintKey,
  MODEL_MAPPING_TEMPLATE,
  presetModelsForType,
  responseTimeColor,
  STATUS_CODE_MAPPING_TEMPLATE,
  statusReason,
  VERTEX_REGION_TEMPLATE,
} from '#app/domain/channels/constants.ts';
import { useHydrated } from '#app/utils/hydrated.ts';
import { useTimeZone } from '#app/utils/use-time-zone.ts';

/** Presentational pieces of the /channel pages (client-safe: no server imports). */

export { FormError } from '#app/domain/users/user-ui.tsx';

export function ChannelStatusTag({ status, otherInfo }: { status: number; otherInfo: string }) {
  const { t } = useTranslation('channels');
  const timeZone = useTimeZone();
  const key = channelStatusKey(status);
  const reason = status === 3 ? statusReason(otherInfo) : null;
  const detail = reason
    ? [
        reason.reason ? t('statusReason', { reason: reason.reason }) : '',
        reason.time ? t('statusTime', { time: formatTime(reason.time, timeZone) }) : '',
      ]
        .filter(Boolean)
        .join(' · ')
    : '';
  return (
    <span className="channel-status">
      <span className={`badge channel-status-${key}`} data-status={key} title={detail || undefined}>
        {t(`status.${key}`)}
      </span>
      {detail ? (
        <small className="channel-status-reason" data-testid="status-reason">
          {detail}
        </small>
      ) : null}
    </span>
  );
}

/** Response time of the last test (ms on the wire), coloured per seed §4. */
export function ResponseTimeTag({ ms, testTime }: { ms: number; testTime: number }) {
  const { t } = useTranslation('channels');
  const timeZone = useTimeZone();
  const color = responseTimeColor(ms);
  return (
    <span
      className={`badge channel-rt channel-rt-${color}`}
      data-rt={color}
      title={testTime ? formatTime(testTime, timeZone) : undefined}
    >
      {ms ? t('responseTime.seconds', { seconds: (ms / 1000).toFixed(2) }) : t('responseTime.untested')}
    </span>
  );
}

/** The values the form shows (strings, as typed); `groups` and `models` as lists. */
export type ChannelFormValues = {
  type: string;
  name: string;
  key: string;
  mode?: string;
  base_url: string;
  other: string;
  openai_organization: string;
  max_input_tokens: string;
  models: string[];
  groups: string[];
  model_mapping: string;
  status_code_mapping: string;
  setting: string;
  auto_ban: string;
  test_model: string;
  priority: string;
  weight: string;
  tag: string;
};

export const EMPTY_CHANNEL_FORM: ChannelFormValues = {
  type: '1',
  name: '',
  key: '',
  base_url: '',
  other: '',
  openai_organization: '',
  max_input_tokens: '0',
  models: [],
  groups: ['default'],
  model_mapping: '',
  status_code_mapping: '',
  setting: '',
  auto_ban: '1',
  test_model: '',
  priority: '0',
  weight: '0',
  tag: '',
};

/** Form values from submitted fields (re-rendering a refused form keeps what was typed, never the key). */
export function valuesFromInput(
  input: Record<string, unknown>,
  base = EMPTY_CHANNEL_FORM,
): ChannelFormValues {
  const s = (k: keyof ChannelFormValues, d: string) =>
    typeof input[k] === 'string' ? (input[k] as string) : d;
  return {
    type: s('type', base.type),
    name: s('name', base.name),
    key: '',
    mode: s('mode', base.mode ?? ''),
    base_url: s('base_url', base.base_url),
    other: s('other', base.other),
    openai_organization: s('openai_organization', base.openai_organization),
    max_input_tokens: s('max_input_tokens', base.max_input_tokens),
    models: Array.isArray(input.models) ? (input.models as string[]) : base.models,
    groups: Array.isArray(input.groups) ? (input.groups as string[]) : base.groups,
    model_mapping: s('model_mapping', base.model_mapping),
    status_code_mapping: s('status_code_mapping', base.status_code_mapping),
    setting: s('setting', base.setting),
    auto_ban: s('auto_ban', base.auto_ban),
    test_model: s('test_model', base.test_model),
    priority: s('priority', base.priority),
    weight: s('weight', base.weight),
    tag: s('tag', base.tag),
  };
}

function splitModels(text: string): string[] {
  return [
    ...new Set(
      text
        .split(',')
        .map((m) => m.trim())
        .filter(Boolean),
    ),
  ];
}

export type ModelFetcher = (form: HTMLFormElement) => Promise<string[] | null>;

/**
 * Every field of seed §5's channel form. Works as a plain form (model and group checkboxes, a comma text of
 * models); with JavaScript the type switches the key hint and `other` label, templates fill the JSON fields,
 * custom models are added (duplicates refused) and the upstream's models can be fetched.
 */
export function ChannelFields({
  mode,
  values,
  groupOptions,
  modelOptions,
  fetchModels,
  fetchModelsSubmit,
  notice,
  fieldErrors,
  types = CHANNEL_TYPES,
  typesSource = 'relay',
}: {
  mode: 'create' | 'edit';
  values: ChannelFormValues;
  groupOptions: string[];
  modelOptions: string[];
  fetchModels?: ModelFetcher;
  /** No `fetchModels` callback: a submit button (intent=fetch_models) lets the page's action fetch them. */
  fetchModelsSubmit?: boolean;
  /** A message for the status line (e.g. how many models the action fetched). */
  notice?: string;
  fieldErrors?: Record<string, unknown>;
  /** The type options: the types the relay serves (served-types.server.ts). */
  types?: readonly ChannelTypeOption[];
  /** Where `types` came from; anything but 'relay' shows a warning under the select. */
  typesSource?: 'relay' | 'stale' | 'unavailable';
}) {
  const { t } = useTranslation('channels');
  const hydrated = useHydrated();
  const [type, setType] = useState(values.type);
  const [models, setModels] = useState(values.models.join(','));
  const [other, setOther] = useState(values.other);
  const [mapping, setMapping] = useState(values.model_mapping);
  const [codeMapping, setCodeMapping] = useState(values.status_code_mapping);
  const [custom, setCustom] = useState('');
  const [note, setNote] = useState(notice ?? '');
  const [fetched, setFetched] = useState<string[]>([]);
  const current = splitModels(models);
  const typeNum = Number(type);
  const preset = presetModelsForType(typeNum);
  const offered = [...new Set([...modelOptions, ...preset, ...fetched, ...values.models])].sort((a, b) =>
    a.localeCompare(b),
  );
  const groups = [...new Set([...groupOptions, ...values.groups])];
  const invalid = (k: string) => (fieldErrors && k in fieldErrors ? true : undefined);
  const otherLabel =
    typeNum === 18 ? t('form.otherXunfei') : typeNum === 41 ? t('form.otherVertex') : t('form.otherGeneric');

  const toggleModel = (m: string, on: boolean) =>
    setModels((text) => {
      const list = splitModels(text).filter((x) => x !== m);
      return (on ? [...list, m] : list).join(',');
    });

  return (
    <div className="channel-fields">
      <div className="channel-field">
        <label htmlFor="channel-type">{t('form.type')}</label>
        <select
          id="channel-type"
          name="type"
          value={type}
          onChange={(e) => {
            setType(e.target.value);
            const preset = presetModelsForType(Number(e.target.value));
            if (preset.length > 0) setModels(preset.join(','));
          }}
          className="channel-input"
        >
          {types.map((ct) => (
            <option key={ct.value} value={ct.value}>
              {ct.label}
            </option>
          ))}
        </select>
        {typesSource !== 'relay' ? (
          <p className="channel-note" role="alert" data-testid="channel-types-warning">
            {typesSource === 'stale' ? t('form.typesStale') : t('form.typesUnavailable')}
          </p>
        ) : null}
      </div>
      <div className="channel-field">
        <label htmlFor="channel-name">{t('form.name')}</label>
        <input
          id="channel-name"
          name="name"
          defaultValue={values.name}
          placeholder={t('form.namePlaceholder')}
          autoComplete="off"
          aria-invalid={invalid('name')}
          className="channel-input"
        />
      </div>
      <div className="channel-field">
        <label htmlFor="channel-key">{t('form.key')}</label>
        <textarea
          id="channel-key"
          name="key"
          rows={typeNum === 41 ? 5 : 2}
          defaultValue=""
          autoComplete="off"
          spellCheck={false}
          aria-describedby="channel-key-hint"
          aria-invalid={invalid('key')}
          className="channel-input channel-mono"
        />
        <small id="channel-key-hint">
          {hydrated ? t(`form.keyHint.${keyHintKey(typeNum)}`) : t('form.keyHint.generic')}
          {mode === 'edit' ? ` ${t('form.keyKeep')}` : ''}
        </small>
        {mode === 'create' ? (
          <label className="channel-check">
            <input type="checkbox" name="mode" value="batch" defaultChecked={values.mode === 'batch'} />
            {t('form.batch')}
          </label>
        ) : null}
      </div>
      <div className="channel-field">
        <label htmlFor="channel-base-url">{t('form.baseUrl')}</label>
        <input
          id="channel-base-url"
          name="base_url"
          type="text"
          inputMode="url"
          defaultValue={values.base_url}
          placeholder={t('form.baseUrlPlaceholder')}
          aria-invalid={invalid('base_url')}
          className="channel-input"
        />
      </div>
      <div className="channel-field">
        <label htmlFor="channel-other">{hydrated ? otherLabel : t('form.other')}</label>
        <textarea
          id="channel-other"
          name="other"
          rows={typeNum === 41 ? 4 : 1}
          value={other}
          onChange={(e) => setOther(e.target.value)}
          aria-invalid={invalid('other')}
          className="channel-input channel-mono"
        />
        {hydrated && typeNum === 41 ? (
          <Button variant="ghost" onPress={() => setOther(VERTEX_REGION_TEMPLATE)}>
            {t('actions.fillTemplate')}
          </Button>
        ) : null}
      </div>
      <div className="channel-field-row">
        <div className="channel-field">
          <label htmlFor="channel-org">{t('form.openaiOrganization')}</label>
          <input
            id="channel-org"
            name="openai_organization"
            defaultValue={values.openai_organization}
            className="channel-input"
          />
        </div>
        <div className="channel-field">
          <label htmlFor="channel-max-input">{t('form.maxInputTokens')}</label>
          <input
            id="channel-max-input"
            name="max_input_tokens"
            type="number"
            min={0}
            step={1}
            defaultValue={values.max_input_tokens}
            className="channel-input"
          />
        </div>
      </div>
      <fieldset className="channel-fieldset">
        <legend>{t('form.groups')}</legend>
        <input type="hidden" name="groups_present" value="1" />
        {groups.map((g) => (
          <label key={g} className="channel-check">
            <input type="checkbox" name="groups" value={g} defaultChecked={values.groups.includes(g)} />
            {g}
          </label>
        ))}
      </fieldset>
      <div className="channel-field">
        <label htmlFor="channel-models">{t('form.models')}</label>
        <textarea
          id="channel-models"
          name="models"
          rows={3}
          value={models}
          onChange={(e) => setModels(e.target.value)}
          aria-describedby="channel-models-help"
          aria-invalid={invalid('models')}
          className="channel-input channel-mono"
        />
        <small id="channel-models-help">{t('form.modelsHelp')}</small>
        {fetchModelsSubmit && !fetchModels ? (
          <div className="channel-model-tools">
            <button
              type="submit"
              name="intent"
              value="fetch_models"
              formNoValidate
              className="btn btn-ghost"
              data-action="fetch-models"
            >
              {t('actions.fetchModels')}
            </button>
          </div>
        ) : null}
        {hydrated ? (
          <div className="channel-model-tools">
            {fetchModels ? (
              <Button
                variant="ghost"
                data-action="fetch-models"
                onPress={async () => {
                  const form = document.getElementById('channel-models')?.closest('form');
                  if (!form) return;
                  const list = await fetchModels(form);
                  if (!list) return;
                  setFetched(list);
                  setModels(list.join(','));
                  setNote(t('form.modelsLoaded', { count: list.length }));
                }}
              >
                {t('actions.fetchModels')}
              </Button>
            ) : null}
            {preset.length ? (
              <Button variant="ghost" data-action="fill-related" onPress={() => setModels(preset.join(','))}>
                {t('actions.fillRelated')}
              </Button>
            ) : null}
            <Button variant="ghost" onPress={() => setModels(offered.join(','))}>
              {t('actions.fillAll')}
            </Button>
            <Button variant="ghost" onPress={() => setModels('')}>
              {t('actions.clearModels')}
            </Button>
            <span className="channel-custom">
              <label htmlFor="channel-custom" className="sr-only">
                {t('form.customModels')}
              </label>
              <input
                id="channel-custom"
                value={custom}
                onChange={(e) => setCustom(e.target.value)}
                placeholder={t('form.customPlaceholder')}
                className="channel-input"
              />
              <Button
                variant="ghost"
                onPress={() => {
                  const add = splitModels(custom);
                  if (add.some((m) => current.includes(m))) {
                    setNote(t('errors.modelsExist'));
                    return;
                  }
                  setModels([...current, ...add].join(','));
                  setCustom('');
                  setNote('');
                }}
              >
                {t('actions.addCustom')}
              </Button>
            </span>
          </div>
        ) : null}
        <p role="status" aria-live="polite" className="channel-note">
          {note}
        </p>
        {offered.length ? (
          <details className="channel-model-pick">
            <summary>{t('form.modelsPick')}</summary>
            <div className="channel-model-grid">
              {offered.map((m) => (
                <label key={m} className="channel-check">
                  <input
                    type="checkbox"
                    // without JavaScript a checked box adds the model to the text above; with it the
                    // boxes mirror the text, which alone is submitted
                    name={hydrated ? undefined : 'models_pick'}
                    value={m}
                    checked={hydrated ? current.includes(m) : false}
                    onChange={(e) => toggleModel(m, e.target.checked)}
                  />
                  {m}
                </label>
              ))}
            </div>
          </details>
        ) : null}
      </div>
      <JsonField
        id="channel-model-mapping"
        name="model_mapping"
        label={t('form.modelMapping')}
        help={t('form.modelMappingHelp')}
        value={mapping}
        setValue={setMapping}
        template={MODEL_MAPPING_TEMPLATE}
        invalid={invalid('model_mapping')}
      />
      <JsonField
        id="channel-status-code-mapping"
        name="status_code_mapping"
        label={t('form.statusCodeMapping')}
        help={t('form.statusCodeMappingHelp')}
        value={codeMapping}
        setValue={setCodeMapping}
        template={STATUS_CODE_MAPPING_TEMPLATE}
        invalid={invalid('status_code_mapping')}
      />
      <div className="channel-field">
        <label htmlFor="channel-setting">{t('form.setting')}</label>
        <textarea
          id="channel-setting"
          name="setting"
          rows={2}
          defaultValue={values.setting}
          aria-describedby="channel-setting-help"
          aria-invalid={invalid('setting')}
          className="channel-input channel-mono"
        />
        <small id="channel-setting-help">{t('form.settingHelp')}</small>
      </div>
      <div className="channel-field">
        <input type="hidden" name="auto_ban" value="0" />
        <label className="channel-check">
          <input type="checkbox" name="auto_ban" value="1" defaultChecked={values.auto_ban !== '0'} />
          {t('form.autoBan')}
        </label>
      </div>
      <div className="channel-field">
        <label htmlFor="channel-test-model">{t('form.testModel')}</label>
        <input
          id="channel-test-model"
          name="test_model"
          defaultValue={values.test_model}
          placeholder={t('form.testModelPlaceholder')}
          className="channel-input"
        />
      </div>
      <div className="channel-field-row">
        <div className="channel-field">
          <label htmlFor="channel-priority">{t('form.priority')}</label>
          <input
            id="channel-priority"
            name="priority"
            type="number"
            min={-999}
            step={1}
            defaultValue={values.priority}
            className="channel-input"
          />
        </div>
        <div className="channel-field">
          <label htmlFor="channel-weight">{t('form.weight')}</label>
          <input
            id="channel-weight"
            name="weight"
            type="number"
            min={0}
            step={1}
            defaultValue={values.weight}
            className="channel-input"
          />
        </div>
        <div className="channel-field">
          <label htmlFor="channel-tag">{t('form.tag')}</label>
          <input id="channel-tag" name="tag" defaultValue={values.tag} className="channel-input" />
        </div>
      </div>
    </div>
  );
}

function JsonField({
  id,
  name,
  label,
  help,
  value,
  setValue,
  template,
  invalid,
}: {
  id: string;
  name: string;
  label: string;
  help: string;
  value: string;
  setValue: (v: string) => void;
  template: string;
  invalid?: boolean;
}) {
  const { t } = useTranslation('channels');
  const hydrated = useHydrated();
  return (
    <div className="channel-field">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        name={name}
        rows={3}
        value={value}
        onChange={(e) => setValue(e.target.value)}
        placeholder={template}
        aria-describedby={`${id}-help`}
        aria-invalid={invalid}
        className="channel-input channel-mono"
      />
      <small id={`${id}-help`}>{help}</small>
      {hydrated ? (
        <Button variant="ghost" onPress={() => setValue(template)}>
          {t('actions.fillTemplate')}
        </Button>
      ) : null}
    </div>
  );
}

/** The tag edit fields (seed §3 Tag edit payload): blank = unchanged; a blank new tag dissolves the tag. */
export function TagFields({ tag, values }: { tag: string; values?: Record<string, string> }) {
  const { t } = useTranslation('channels');
  return (
    <div className="channel-fields">
      <p>{t('tagForm.blankHint')}</p>
      <input type="hidden" name="tag" value={tag} />
      <div className="channel-field">
        <label htmlFor="tag-new">{t('tagForm.newTag')}</label>
        <input id="tag-new" name="new_tag" defaultValue={values?.new_tag ?? tag} className="channel-input" />
      </div>
      <div className="channel-field">
        <label htmlFor="tag-models">{t('tagForm.models')}</label>
        <textarea
          id="tag-models"
          name="models"
          rows={2}
          defaultValue={values?.models ?? ''}
          className="channel-input channel-mono"
        />
      </div>
      <div className="channel-field">
        <label htmlFor="tag-groups">{t('tagForm.groups')}</label>
        <input id="tag-groups" name="groups" defaultValue={values?.groups ?? ''} className="channel-input" />
      </div>
      <div className="channel-field">
        <label htmlFor="tag-mapping">{t('tagForm.modelMapping')}</label>
        <textarea
          id="tag-mapping"
          name="model_mapping"
          rows={3}
          defaultValue={values?.model_mapping ?? ''}
          className="channel-input channel-mono"
        />
      </div>
      <div className="channel-field-row">
        <div className="channel-field">
          <label htmlFor="tag-priority">{t('tagForm.priority')}</label>
          <input
            id="tag-priority"
            name="priority"
            type="number"
            min={-999}
            step={1}
            defaultValue={values?.priority ?? ''}
            className="channel-input"
          />
        </div>
        <div className="channel-field">
          <label htmlFor="tag-weight">{t('tagForm.weight')}</label>
          <input
            id="tag-weight"
            name="weight"
            type="number"
            min={0}
            step={1}
            defaultValue={values?.weight ?? ''}
            className="channel-input"
          />
        </div>
      </div>
    </div>
  );
}

/** Route error boundary of the /channel pages: the 403 page for non-admins, the generic error page otherwise. */
export function ChannelsErrorBoundary() {
  return <ListErrorBoundary ns="channels" />;
}

/** The edit form's values of a saved channel (the key is never sent back: blank keeps it). */
export function valuesFromChannel(c: {
  type: number;
  name: string;
  base_url: string;
  other: string;
  openai_organization: string;
  max_input_tokens: number;
  models: string;
  group: string;
  model_mapping: string;
  status_code_mapping: string;
  setting: string;
  auto_ban: number;
  test_model: string;
  priority: number;
  weight: number;
  tag: string;
}): ChannelFormValues {
  return {
    type: String(c.type),
    name: c.name,
    key: '',
    base_url: c.base_url,
    other: c.other,
    openai_organization: c.openai_organization,
    max_input_tokens: String(c.max_input_tokens),
    models: splitModels(c.models),
    groups: splitModels(c.group),
    model_mapping: c.model_mapping,
    status_code_mapping: c.status_code_mapping,
    setting: c.setting,
    auto_ban: String(c.auto_ban),
    test_model: c.test_model,
    priority: String(c.priority),
    weight: String(c.weight),
    tag: c.tag,
  };
}

export type TestOutcome = { id: number; name: string; ok: boolean; time: number; message: string };

/** The per-channel results of a test-all run. */
export function TestResults({ results }: { results: TestOutcome[] }) {
  const { t } = useTranslation('channels');
  if (!results.length) return null;
  return (
    <ul className="channel-test-results">
      {results.map((r) => (
        <li key={r.id} data-ok={r.ok}>
          #{r.id} {r.name}:{' '}
          {r.ok ? `${t('test.ok')} (${r.time.toFixed(2)} s)` : `${t('test.fail')} — ${r.message}`}
        </li>
      ))}
    </ul>
  );
}
