/**
 * Settings modelTab (seed 000): the model ratio table (add / edit / delete / batch set), the JSON text areas, the
 * models with no price, and reset to defaults. Every form is a plain POST to /setting (works without JavaScript);
 * dialogs are URL-addressed (`mdialog`), so they are react-aria modals with JavaScript and page sections without.
 */
import { Form, useActionData, useLocation, useNavigation } from '@remix-run/react';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { TableScroll } from '#app/components/list/data-table.tsx';
import { Pagination } from '#app/components/pagination.tsx';
import { UrlDialog } from '#app/components/settings/dialog.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { Link } from '#app/components/ui/link.tsx';
import type { ModelRow } from '#app/domain/pricing/model-tab.server.ts';
import type { ModelTabData, ModelTabReply } from '#app/domain/pricing/model-tab-page.server.ts';

function useReply(intent: string): ModelTabReply | undefined {
  const reply = useActionData() as ModelTabReply | undefined;
  return reply?.intent === intent ? reply : undefined;
}

function ReplyError({ intent }: { intent: string }) {
  const reply = useReply(intent);
  if (!reply?.error) return null;
  return (
    <p className="form-error" role="alert" data-testid="model-tab-error">
      {reply.error}
    </p>
  );
}

function useBusy(intent: string): boolean {
  const navigation = useNavigation();
  return navigation.state === 'submitting' && navigation.formData?.get('intent') === intent;
}

function dialogHref(search: string, dialog: string, model?: string): string {
  const params = new URLSearchParams(search);
  params.set('tab', 'modelTab');
  params.set('mdialog', dialog);
  if (model !== undefined) params.set('model', model);
  else params.delete('model');
  return `/setting?${params}`;
}

/** The current URL (a dialog's form posts here, so a refusal re-renders the dialog with its message). */
function useHere(): string {
  return `/setting${useLocation().search}`;
}

/** The current tab URL without a dialog (where dialogs close to and forms come back to). */
function useBack(): string {
  const { search } = useLocation();
  const params = new URLSearchParams(search);
  params.delete('mdialog');
  params.delete('model');
  params.set('tab', 'modelTab');
  return `/setting?${params}`;
}

const show = (n: number | undefined, dash: string) => (n === undefined ? dash : String(n));

export function ModelTab({ data }: { data: ModelTabData }) {
  const { t } = useTranslation('pricing');
  const { search } = useLocation();
  const back = useBack();
  return (
    <div className="model-tab">
      <section className="card" aria-labelledby="model-table-title">
        <h2 id="model-table-title">{t('tab.title')}</h2>
        <p className="field-hint">{t('tab.intro')}</p>
        <div className="model-tab-toolbar">
          <Form method="get" action="/setting" role="search" className="model-tab-search">
            <input type="hidden" name="tab" value="modelTab" />
            <label>
              {t('tab.search')}
              <input type="search" name="mq" defaultValue={data.q} />
            </label>
            <Button type="submit">{t('tab.searchSubmit')}</Button>
          </Form>
          <Link to={dialogHref(search, 'add', '')} className="btn btn-primary">
            {t('tab.add')}
          </Link>
          <Link to={dialogHref(search, 'reset')} className="btn btn-danger">
            {t('tab.reset')}
          </Link>
        </div>
        {data.rows.length === 0 ? (
          <p className="notice">{t('tab.empty')}</p>
        ) : (
          <TableScroll>
            <table className="pricing-table model-tab-table">
              <thead>
                <tr>
                  <th scope="col">
                    <span className="sr-only">{t('tab.batchTitle')}</span>
                  </th>
                  <th scope="col">{t('tab.name')}</th>
                  <th scope="col">{t('tab.price')}</th>
                  <th scope="col">{t('tab.ratio')}</th>
                  <th scope="col">{t('tab.completion')}</th>
                  <th scope="col">{t('tab.actions')}</th>
                </tr>
              </thead>
              <tbody>
                {data.rows.map((row) => (
                  <tr key={row.name} data-model={row.name}>
                    <td>
                      <input
                        type="checkbox"
                        name="models"
                        value={row.name}
                        form="model-batch"
                        aria-label={t('tab.select', { model: row.name })}
                      />
                    </td>
                    <th scope="row">{row.name}</th>
                    <td data-col="price">{show(row.price, t('tab.unsetValue'))}</td>
                    <td data-col="ratio">{show(row.ratio, t('tab.unsetValue'))}</td>
                    <td data-col="completion">{show(row.completion, t('tab.unsetValue'))}</td>
                    <td>
                      <div className="model-tab-actions">
                        <Link to={dialogHref(search, 'edit', row.name)} className="btn btn-ghost">
                          {t('tab.edit')}
                        </Link>
                        <Link to={dialogHref(search, 'delete', row.name)} className="btn btn-ghost">
                          {t('tab.delete')}
                        </Link>
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
        <Pagination page={data.page} pages={data.pages} total={data.total} />
        <BatchForm back={back} />
      </section>
      <UnsetModels data={data} />
      <JsonForm data={data} back={back} />
      {data.dialog === 'add' || data.dialog === 'edit' ? (
        <ModelDialog
          row={data.dialog === 'edit' ? data.model : null}
          prefill={data.model?.name ?? ''}
          back={back}
        />
      ) : null}
      {data.dialog === 'delete' && data.model ? <DeleteDialog row={data.model} back={back} /> : null}
      {data.dialog === 'reset' ? <ResetDialog back={back} /> : null}
    </div>
  );
}

function BatchForm({ back }: { back: string }) {
  const { t } = useTranslation('pricing');
  const busy = useBusy('modelBatch');
  return (
    <Form method="post" action={back} id="model-batch" className="settings-form model-tab-batch">
      <h3>{t('tab.batchTitle')}</h3>
      <input type="hidden" name="back" value={back} />
      <label>
        {t('tab.batchMode')}
        <select name="mode" defaultValue="ratio">
          {(['ratio', 'completion', 'both', 'price'] as const).map((m) => (
            <option key={m} value={m}>
              {t(`tab.batchModes.${m}`)}
            </option>
          ))}
        </select>
      </label>
      <label>
        {t('tab.batchValue')}
        <input type="text" inputMode="decimal" name="value" />
      </label>
      <label>
        {t('tab.batchValue2')}
        <input type="text" inputMode="decimal" name="value2" />
      </label>
      <ReplyError intent="modelBatch" />
      <div>
        <Button type="submit" name="intent" value="modelBatch" isDisabled={busy}>
          {t('tab.batchApply')}
        </Button>
      </div>
    </Form>
  );
}

function UnsetModels({ data }: { data: ModelTabData }) {
  const { t } = useTranslation('pricing');
  const { search } = useLocation();
  return (
    <section className="card" aria-labelledby="unset-models-title">
      <h2 id="unset-models-title">{t('tab.unsetTitle')}</h2>
      {data.unset.length === 0 ? (
        <p className="field-hint">{t('tab.unsetEmpty')}</p>
      ) : (
        <ul className="pricing-groups" data-testid="unset-models">
          {data.unset.map((m) => (
            <li key={m}>
              <Link
                to={dialogHref(search, 'add', m)}
                className="pricing-tag"
                aria-label={t('tab.unsetAdd', { model: m })}
              >
                {m}
              </Link>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function JsonForm({ data, back }: { data: ModelTabData; back: string }) {
  const { t } = useTranslation('pricing');
  const busy = useBusy('modelJson');
  const reply = useReply('modelJson');
  return (
    <section className="card" aria-labelledby="model-json-title">
      <h2 id="model-json-title">{t('tab.jsonTitle')}</h2>
      <Form method="post" action={back} className="settings-form">
        <input type="hidden" name="back" value={back} />
        {(['ModelPrice', 'ModelRatio', 'CompletionRatio'] as const).map((key) => (
          <label key={key}>
            {key}
            <textarea
              name={key}
              rows={8}
              defaultValue={data.json[key]}
              spellCheck={false}
              aria-invalid={reply?.fieldErrors?.[key] ? true : undefined}
              className="model-tab-json"
            />
          </label>
        ))}
        <ReplyError intent="modelJson" />
        <div>
          <Button type="submit" variant="primary" name="intent" value="modelJson" isDisabled={busy}>
            {t('tab.jsonSave')}
          </Button>
        </div>
      </Form>
    </section>
  );
}

function ModelDialog({ row, prefill, back }: { row: ModelRow | null; prefill: string; back: string }) {
  const { t } = useTranslation('pricing');
  const busy = useBusy('modelSave');
  const reply = useReply('modelSave');
  // With JavaScript a typed fixed price disables the ratio fields (seed 000 §4); the server drops them anyway.
  const [price, setPrice] = useState(row?.price === undefined ? '' : String(row.price));
  const fixed = price.trim() !== '';
  const title = row ? t('tab.editTitle', { name: row.name }) : t('tab.addTitle');
  const here = useHere();
  return (
    <UrlDialog id="model" title={title} closeTo={back}>
      <Form method="post" action={here} className="settings-form">
        <input type="hidden" name="back" value={back} />
        <input type="hidden" name="original" value={row?.name ?? ''} />
        <label>
          {t('tab.name')}
          <input
            type="text"
            name="name"
            defaultValue={row?.name ?? prefill}
            required
            maxLength={255}
            aria-invalid={reply?.fieldErrors?.name ? true : undefined}
          />
        </label>
        <label>
          {t('tab.price')}
          <input
            type="text"
            inputMode="decimal"
            name="price"
            value={price}
            onChange={(e) => setPrice(e.target.value)}
            aria-invalid={reply?.fieldErrors?.price ? true : undefined}
          />
        </label>
        <label>
          {t('tab.ratio')}
          <input
            type="text"
            inputMode="decimal"
            name="ratio"
            defaultValue={row?.ratio ?? ''}
            disabled={fixed}
            aria-invalid={reply?.fieldErrors?.ratio ? true : undefined}
          />
        </label>
        <label>
          {t('tab.completion')}
          <input
            type="text"
            inputMode="decimal"
            name="completion"
            defaultValue={row?.completion ?? ''}
            disabled={fixed}
            aria-invalid={reply?.fieldErrors?.completion ? true : undefined}
          />
        </label>
        {fixed ? (
          <p className="field-hint" aria-live="polite">
            {t('tab.priceDisablesRatios')}
          </p>
        ) : null}
        <ReplyError intent="modelSave" />
        <div className="actions">
          <Button type="submit" variant="primary" name="intent" value="modelSave" isDisabled={busy}>
            {t('tab.save')}
          </Button>
          <Link to={back} className="btn">
            {t('tab.cancel')}
          </Link>
        </div>
      </Form>
    </UrlDialog>
  );
}

function DeleteDialog({ row, back }: { row: ModelRow; back: string }) {
  const { t } = useTranslation('pricing');
  const here = useHere();
  return (
    <UrlDialog id="model-delete" title={t('tab.confirmDeleteTitle')} closeTo={back}>
      <Form method="post" action={here} className="settings-form">
        <input type="hidden" name="back" value={back} />
        <input type="hidden" name="name" value={row.name} />
        <p>{t('tab.confirmDeleteBody', { name: row.name })}</p>
        <ReplyError intent="modelDelete" />
        <div className="actions">
          <Button type="submit" name="intent" value="modelDelete" className="btn-danger">
            {t('tab.delete')}
          </Button>
          <Link to={back} className="btn">
            {t('tab.cancel')}
          </Link>
        </div>
      </Form>
    </UrlDialog>
  );
}

function ResetDialog({ back }: { back: string }) {
  const { t } = useTranslation('pricing');
  const here = useHere();
  return (
    <UrlDialog id="model-reset" title={t('tab.confirmResetTitle')} closeTo={back}>
      <Form method="post" action={here} className="settings-form">
        <p>{t('tab.confirmResetBody')}</p>
        <ReplyError intent="modelReset" />
        <div className="actions">
          <Button type="submit" name="intent" value="modelReset" className="btn-danger">
            {t('tab.reset')}
          </Button>
          <Link to={back} className="btn">
            {t('tab.cancel')}
          </Link>
        </div>
      </Form>
    </UrlDialog>
  );
}
