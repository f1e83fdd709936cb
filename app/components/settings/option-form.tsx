/**
 * One option form of an admin settings tab (ADR 023): a card with its title, fields named by option key and its
 * own save button posting `intent=option:<id>` to /setting?tab=<tab>. A plain POST form (works without
 * JavaScript; with it Remix submits the same form by fetch). The server saves only the changed keys and answers
 * 'you seem to have changed nothing', 'partial save failed, please retry' or the form's confirmation (toast).
 * Fields read the stored value, or what was typed when the server refused it, and show the key's error. A key the
 * viewer may not change (root-only for an administrator, ADR 033) is a disabled field saying "only root can
 * change this": disabled fields are not posted, and the server refuses them anyway.
 */
import { Form, useActionData, useNavigation } from '@remix-run/react';
import { createContext, type ReactNode, useContext, useEffect, useState } from 'react';
import { Dialog, Heading, Modal, ModalOverlay } from 'react-aria-components';
import { useTranslation } from 'react-i18next';
import { Button } from '#app/components/ui/button.tsx';
import type { OptionFormReply, OptionFormValues } from '#app/domain/settings/option-form.server.ts';
import { useHydrated } from '#app/utils/hydrated.ts';

type FormState = { id: string; data: OptionFormValues; reply: OptionFormReply | undefined };
const FormContext = createContext<FormState | null>(null);

const fieldId = (formId: string, key: string) => `opt-${formId}-${key.replace(/\./g, '-')}`;

export function useOptionReply(intent: string): OptionFormReply | undefined {
  const raw = useActionData() as OptionFormReply | undefined;
  return raw?.intent === intent ? raw : undefined;
}

export function OptionForm({
  tab,
  id,
  title,
  data,
  saveLabel,
  confirmStep,
  after,
  children,
}: {
  tab: string;
  id: string;
  title: string;
  data: OptionFormValues;
  saveLabel?: string;
  /** Labels of the confirmation the server may ask for (spec `confirm`). */
  confirmStep?: { title: string; confirm: string; cancel: string };
  /** Shown under the form, inside the card (e.g. a separate action form). */
  after?: ReactNode;
  children: ReactNode;
}) {
  const { t } = useTranslation('settings');
  const intent = `option:${id}`;
  const reply = useOptionReply(intent);
  const navigation = useNavigation();
  const busy = navigation.state !== 'idle' && navigation.formData?.get('intent') === intent;
  const titleId = `${fieldId(id, 'title')}`;
  const formId = fieldId(id, 'form');
  // Every key root-only for this viewer (ADR 033): the fields are read-only and there is nothing to save.
  const readOnly = data.readOnlyForms?.[id] === true;
  return (
    <FormContext.Provider value={{ id, data, reply }}>
      <section className="card option-form" aria-labelledby={titleId}>
        <h2 id={titleId}>{title}</h2>
        <Form id={formId} method="post" action={`/setting?tab=${tab}`} className="settings-form" noValidate>
          {readOnly ? (
            <p className="notice" data-testid={`${id}-root-only`}>
              {t('optionForm.rootOnlyForm')}
            </p>
          ) : null}
          {reply?.error ? (
            <p className="form-error" role="alert" data-testid={`${id}-error`}>
              {reply.error}
            </p>
          ) : null}
          {children}
          {reply?.confirm && confirmStep ? (
            <ConfirmStep
              reply={reply}
              formId={formId}
              intent={intent}
              message={reply.confirm}
              labels={confirmStep}
              testId={`${id}-confirm`}
            />
          ) : null}
          <div>
            <Button
              type="submit"
              variant="primary"
              name="intent"
              value={intent}
              isDisabled={busy || readOnly}
            >
              {saveLabel ?? t('optionForm.save')}
            </Button>
          </div>
        </Form>
        {after}
      </section>
    </FormContext.Provider>
  );
}

/**
 * The server asked to confirm the change (spec `confirm`): the form is posted again with `confirm=yes`. With
 * JavaScript a react-aria dialog whose confirm button submits the form; without, a warning and a confirm button
 * inside the form (a second submit).
 */
function ConfirmStep({
  reply,
  formId,
  intent,
  message,
  labels,
  testId,
}: {
  /** Each new answer asking to confirm opens the step again. */
  reply: OptionFormReply;
  formId: string;
  intent: string;
  message: string;
  labels: { title: string; confirm: string; cancel: string };
  testId: string;
}) {
  const hydrated = useHydrated();
  const [open, setOpen] = useState(true);
  // Reopen for every new answer (a new object), also one equal to the last.
  useEffect(() => setOpen(true), [reply]);
  if (!open) return null;
  const hidden = <input type="hidden" name="confirm" value="yes" />;
  if (!hydrated) {
    return (
      <div className="notice confirm-step" role="alert" data-testid={testId}>
        {hidden}
        <p>
          <strong>{labels.title}</strong> {message}
        </p>
        <Button type="submit" variant="primary" className="btn-danger" name="intent" value={intent}>
          {labels.confirm}
        </Button>
      </div>
    );
  }
  return (
    <>
      {hidden}
      <ModalOverlay
        className="settings-modal-overlay"
        isOpen
        isDismissable
        onOpenChange={(isOpen) => setOpen(isOpen)}
      >
        <Modal className="settings-modal">
          <Dialog className="settings-dialog" role="alertdialog" data-testid={testId}>
            <Heading slot="title">{labels.title}</Heading>
            <p>{message}</p>
            <div className="dialog-actions">
              <Button onPress={() => setOpen(false)}>{labels.cancel}</Button>{' '}
              <Button
                type="submit"
                form={formId}
                variant="primary"
                className="btn-danger"
                name="intent"
                value={intent}
              >
                {labels.confirm}
              </Button>
            </div>
          </Dialog>
        </Modal>
      </ModalOverlay>
    </>
  );
}

type FieldProps = {
  name: string;
  label: string;
  help?: string;
};

function useField(name: string) {
  const state = useContext(FormContext);
  if (!state) throw new Error('option fields belong inside <OptionForm>');
  const id = fieldId(state.id, name);
  const value = state.reply?.values?.[name] ?? state.data.values[name] ?? '';
  const error = state.reply?.fieldErrors?.[name]?.[0];
  // Root-only for this viewer (ADR 033): disabled, so the browser never posts it; the server refuses it anyway.
  const readOnly = state.data.readOnly?.[name] === true;
  // The form's own note says it once when every field is read-only.
  const note = readOnly && state.data.readOnlyForms?.[state.id] !== true;
  return { id, value, error, readOnly, note, secretSet: state.data.secretsSet[name] ?? false };
}

function Described({
  id,
  help,
  error,
  reserve,
  note,
}: {
  id: string;
  help?: string;
  error?: string;
  /** Keep the error's line even when empty (a field checked on blur). */
  reserve?: boolean;
  /** Say that only root can change the field. */
  note?: boolean;
}) {
  const { t } = useTranslation('settings');
  return (
    <>
      {note ? (
        <span id={`${id}-root`} className="field-hint root-only" data-testid={`${id}-root-only`}>
          {t('optionForm.rootOnly')}
        </span>
      ) : null}
      {help ? (
        <span id={`${id}-help`} className="field-hint">
          {help}
        </span>
      ) : null}
      {error || reserve ? (
        <span
          id={`${id}-error`}
          className="form-error"
          role="alert"
          data-testid={`${id}-error`}
          style={reserve ? { display: 'block', minHeight: '1.5em' } : undefined}
        >
          {error ?? ''}
        </span>
      ) : null}
    </>
  );
}

/**
 * A field checked on blur (with JavaScript): a blur only ever adds a message, and editing hides the previous one
 * (the field's or the server's), so a click on the save button that blurs a valid field moves nothing under the
 * pointer; the error line is reserved for the same reason. A new answer from the server is shown again.
 */
function useBlurCheck(serverError: string | undefined) {
  // null: show the server's error; '': edited since, show nothing; else the blur check's message.
  const [local, setLocal] = useState<string | null>(null);
  useEffect(() => setLocal(null), [serverError]);
  return {
    shown: local === null ? serverError : local || undefined,
    onChange: () => setLocal((prev) => (prev === '' ? prev : '')),
    check: (message: string | null) => {
      if (message !== null) setLocal(message);
    },
  };
}

const describedBy = (id: string, help?: string, error?: string, note?: boolean) =>
  [note ? `${id}-root` : '', help ? `${id}-help` : '', error ? `${id}-error` : '']
    .filter(Boolean)
    .join(' ') || undefined;

/**
 * A one-line text or number input. With `rangeMessage`, a number outside `min`–`max` is flagged on blur (with
 * JavaScript; the registry checks it again on save).
 */
export function OptionInput({
  name,
  label,
  help,
  type = 'text',
  min,
  max,
  step,
  rangeMessage,
}: FieldProps & {
  type?: 'text' | 'number' | 'url';
  min?: number;
  max?: number;
  step?: number | 'any';
  rangeMessage?: string;
}) {
  const { id, value, error, readOnly, note } = useField(name);
  const blur = useBlurCheck(error);
  const shown = rangeMessage ? blur.shown : error;
  return (
    <div className="option-field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        name={name}
        type={type}
        disabled={readOnly}
        min={min}
        max={max}
        step={step}
        inputMode={type === 'number' && step !== undefined && step !== 1 ? 'decimal' : undefined}
        defaultValue={value}
        onChange={rangeMessage ? blur.onChange : undefined}
        onBlur={
          rangeMessage
            ? (e) => {
                const text = e.currentTarget.value.trim();
                const n = text === '' ? Number.NaN : Number(text);
                const ok =
                  Number.isFinite(n) && (min === undefined || n >= min) && (max === undefined || n <= max);
                blur.check(ok ? null : rangeMessage);
              }
            : undefined
        }
        aria-invalid={shown ? true : undefined}
        aria-describedby={describedBy(id, help, shown, note)}
      />
      <Described id={id} help={help} error={shown} reserve={rangeMessage !== undefined} note={note} />
    </div>
  );
}

/** A multi-line text (Markdown, HTML, JSON). */
export function OptionTextArea({ name, label, help, rows = 6 }: FieldProps & { rows?: number }) {
  const { id, value, error, readOnly, note } = useField(name);
  return (
    <div className="option-field">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        name={name}
        rows={rows}
        disabled={readOnly}
        defaultValue={value}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, help, error, note)}
      />
      <Described id={id} help={help} error={error} note={note} />
    </div>
  );
}

/** A boolean option: an unchecked box posts nothing, so a hidden 'false' comes first and 'true' wins. */
export function OptionSwitch({ name, label, help }: FieldProps) {
  const { id, value, error, readOnly, note } = useField(name);
  return (
    <div className="option-field">
      <input type="hidden" name={name} value="false" disabled={readOnly} />
      <label htmlFor={id} className="inline">
        <input
          id={id}
          type="checkbox"
          name={name}
          value="true"
          disabled={readOnly}
          defaultChecked={value === 'true'}
          aria-describedby={describedBy(id, help, error, note)}
        />{' '}
        {label}
      </label>
      <Described id={id} help={help} error={error} note={note} />
    </div>
  );
}

/** A write-only secret: always empty, says whether a value is stored; left empty it is not sent (kept). */
export function OptionSecret({ name, label, help }: FieldProps) {
  const { t } = useTranslation('settings');
  const { id, error, secretSet, readOnly, note } = useField(name);
  // Read-only, "leave empty to keep it" would be advice the viewer cannot follow: only whether a value is set.
  const state = secretSet
    ? readOnly
      ? t('optionForm.secretSetReadOnly')
      : t('optionForm.secretSet')
    : t('optionForm.secretUnset');
  const hint = help ? `${state}. ${help}` : state;
  return (
    <div className="option-field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        name={name}
        type="password"
        autoComplete="new-password"
        disabled={readOnly}
        defaultValue=""
        placeholder={secretSet ? '••••••••' : ''}
        data-secret-set={secretSet ? 'true' : 'false'}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, hint, error, note)}
      />
      <Described id={id} help={hint} error={error} note={note} />
    </div>
  );
}

/** Blank inputs after the stored amounts, for adding amounts without JavaScript. */
const BLANK_AMOUNTS = 3;

/**
 * A JSON list of amounts edited as one number input per amount (>= 0, step 0.01) plus blank ones to add;
 * the server builds the array from the non-empty inputs (`numberLists` of the form's spec).
 */
export function OptionNumberList({ name, label, help }: FieldProps) {
  const { t } = useTranslation('settings');
  const { id, value, error, readOnly, note } = useField(name);
  let amounts: unknown[] = [];
  try {
    const parsed: unknown = JSON.parse(value);
    if (Array.isArray(parsed)) amounts = parsed;
  } catch {
    amounts = [];
  }
  const slots = [...amounts.map((a) => String(a)), ...Array.from({ length: BLANK_AMOUNTS }, () => '')];
  return (
    <fieldset
      className="option-field option-list"
      disabled={readOnly}
      aria-describedby={describedBy(id, help, error, note)}
    >
      <legend id={`${id}-legend`}>{label}</legend>
      <div className="option-list-items">
        {slots.map((amount, i) => (
          <input
            key={i}
            type="number"
            name={name}
            min={0}
            step={0.01}
            defaultValue={amount}
            aria-label={t('payTab.amount', { list: label, n: i + 1 })}
            aria-invalid={error ? true : undefined}
            data-testid={`${id}-${i}`}
          />
        ))}
      </div>
      <Described id={id} help={help} error={error} note={note} />
    </fieldset>
  );
}

/** One of a fixed list of values (the registry's `values`), with a label per value. */
export function OptionSelect({
  name,
  label,
  help,
  choices,
}: FieldProps & { choices: readonly { value: string; label: string }[] }) {
  const { id, value, error, readOnly, note } = useField(name);
  return (
    <div className="option-field">
      <label htmlFor={id}>{label}</label>
      <select
        id={id}
        name={name}
        disabled={readOnly}
        defaultValue={value}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, help, error, note)}
      >
        {choices.map((c) => (
          <option key={c.value} value={c.value}>
            {c.label}
          </option>
        ))}
      </select>
      <Described id={id} help={help} error={error} note={note} />
    </div>
  );
}

/**
 * A JSON text area checked on blur with JavaScript ('not a valid JSON string', seed 000 §5); the registry checks
 * it again on save, so without JavaScript the server's message shows instead.
 */
export function OptionJson({ name, label, help, rows = 6 }: FieldProps & { rows?: number }) {
  const { t } = useTranslation('settings');
  const { id, value, error, readOnly, note } = useField(name);
  const blur = useBlurCheck(error);
  const shown = blur.shown;
  return (
    <div className="option-field">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        name={name}
        rows={rows}
        disabled={readOnly}
        defaultValue={value}
        spellCheck={false}
        onChange={blur.onChange}
        onBlur={(e) => {
          const text = e.currentTarget.value;
          try {
            JSON.parse(text);
            blur.check(null);
          } catch {
            blur.check(t('options.errors.invalidJson', { key: label }));
          }
        }}
        aria-invalid={shown ? true : undefined}
        aria-describedby={describedBy(id, help, shown, note)}
      />
      <Described id={id} help={help} error={shown} reserve note={note} />
    </div>
  );
}
