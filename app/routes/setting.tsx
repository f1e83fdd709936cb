import {
  type ActionFunctionArgs,
  data,
  type LinksFunction,
  type LoaderFunctionArgs,
  type MetaFunction,
} from '@remix-run/node';
import { useLoaderData } from '@remix-run/react';
import { Role } from '@switchyard/db/entities/user.ts';
import { useTranslation } from 'react-i18next';
import { ModelTab } from '#app/components/settings/model-tab.tsx';
import { ModelsTab } from '#app/components/settings/models-tab.tsx';
import { OperationTab } from '#app/components/settings/operation-tab.tsx';
import { OtherTab } from '#app/components/settings/other-tab.tsx';
import { PayTab } from '#app/components/settings/pay-tab.tsx';
import { PersonalTab } from '#app/components/settings/personal-tab.tsx';
import { RatelimitTab } from '#app/components/settings/ratelimit-tab.tsx';
import settingsStyles from '#app/components/settings/settings.css?url';
import { SystemTab } from '#app/components/settings/system-tab.tsx';
import { Link } from '#app/components/ui/link.tsx';
import type { AccountCtx } from '#app/domain/account/account.server.ts';
import { personalTabData } from '#app/domain/account/settings-page.server.ts';
import { parseDialog, parseTab, SETTING_TABS } from '#app/domain/account/tabs.ts';
import { requireUser } from '#app/domain/auth/session.server.ts';
import { isModelTabIntent, loadModelTab, modelTabAction } from '#app/domain/pricing/model-tab-page.server.ts';
import { loadModelsSettings } from '#app/domain/settings/models-settings.server.ts';
import { loadOperationTab } from '#app/domain/settings/operation.server.ts';
import { optionFormAction } from '#app/domain/settings/option-form.server.ts';
import {
  CHECK_UPDATE_INTENT,
  checkUpdatePageAction,
  loadOtherTab,
} from '#app/domain/settings/other.server.ts';
import { loadPayTab } from '#app/domain/settings/pay.server.ts';
import { personalAction } from '#app/domain/settings/personal.server.ts';
import { loadRatelimitTab } from '#app/domain/settings/ratelimit.server.ts';
import { loadSystemTab, TEST_MAIL_INTENT, testMailPageAction } from '#app/domain/settings/system.server.ts';
import { findOptionForm } from '#app/domain/settings/tab-forms.server.ts';
import { getFixedT } from '#app/i18n/i18n.server.ts';
import { getServices } from '#app/services.server.ts';

export const handle = { i18n: ['settings', 'common', 'pricing'] };

export const links: LinksFunction = () => [{ rel: 'stylesheet', href: settingsStyles }];

async function pageCtx(request: Request, context: LoaderFunctionArgs['context']) {
  const services = getServices(context);
  const user = await requireUser(request, services);
  const ctx: AccountCtx = {
    em: services.orm.em.fork(),
    actor: user,
    options: services.options,
    secrets: services.secrets,
    t: await getFixedT(request),
  };
  return { services, user, ctx };
}

/**
 * GET /setting?tab=personal (default) | operation | ratelimit | models | system | other | pay | modelTab.
 * The personal tab is everyone's; the others are admin-only (403 for anyone else). `dialog` opens one of the
 * personal tab's dialogs (a page section without JavaScript).
 */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const { services, user, ctx } = await pageCtx(request, context);
  const url = new URL(request.url);
  const tab = parseTab(url.searchParams.get('tab')) ?? 'personal';
  const isAdmin = user.role >= Role.Admin;
  const title = ctx.t('settings:title');
  if (tab !== 'personal') {
    return data(
      {
        title,
        tab,
        isAdmin,
        forbidden: !isAdmin,
        personal: null,
        dialog: null,
        email: '',
        modelTab: tab === 'modelTab' && isAdmin ? await loadModelTab(ctx, url) : null,
        modelsSettings: tab === 'models' && isAdmin ? loadModelsSettings(ctx.options, user) : null,
        ratelimit: tab === 'ratelimit' && isAdmin ? loadRatelimitTab(ctx.options, user) : null,
        other: tab === 'other' && isAdmin ? loadOtherTab(ctx.options, services, user) : null,
        pay: tab === 'pay' && isAdmin ? loadPayTab(ctx.options, user) : null,
        operation: tab === 'operation' && isAdmin ? loadOperationTab(ctx.options, user) : null,
        system: tab === 'system' && isAdmin ? loadSystemTab(ctx.options, user) : null,
      },
      {
        status: isAdmin ? 200 : 403,
      },
    );
  }
  return {
    title,
    tab,
    isAdmin,
    forbidden: false,
    personal: await personalTabData(ctx, request),
    dialog: parseDialog(url.searchParams.get('dialog')),
    email: url.searchParams.get('email') ?? '',
    modelTab: null,
    modelsSettings: null,
    ratelimit: null,
    other: null,
    pay: null,
    operation: null,
    system: null,
  };
}

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Settings' }];

const text = (form: FormData, key: string) => {
  const v = form.get(key);
  return typeof v === 'string' ? v : '';
};

/**
 * POST /setting: dispatches by intent to the tab that owns it: the pricing tab (modelTab), an option form of an
 * admin tab (`option:<id>`, ADR 023; the models tab's too), the update check of the other tab, the test mail of
 * the system tab, else the personal tab.
 */
export async function action({ request, context }: ActionFunctionArgs) {
  const { services, user, ctx } = await pageCtx(request, context);
  const form = await request.formData();
  const intent = text(form, 'intent');
  if (isModelTabIntent(intent)) return modelTabAction(request, services, user, form);
  const optionForm = findOptionForm(intent);
  if (optionForm) return optionFormAction(request, services, user, optionForm, form);
  if (intent === CHECK_UPDATE_INTENT) return checkUpdatePageAction(request, services, user);
  if (intent === TEST_MAIL_INTENT) return testMailPageAction(request, services, user);
  return personalAction(request, services, user, ctx, form);
}

export default function SettingsPage() {
  const {
    tab,
    isAdmin,
    forbidden,
    personal,
    dialog,
    email,
    modelTab,
    modelsSettings,
    ratelimit,
    other,
    pay,
    operation,
    system,
  } = useLoaderData<typeof loader>();
  const { t } = useTranslation('settings');
  const tabs = isAdmin ? SETTING_TABS : (['personal'] as const);
  return (
    <div className="page settings-page">
      <h1>{t('title')}</h1>
      <nav aria-label={t('title')}>
        <ul className="settings-tabs">
          {tabs.map((key) => (
            <li key={key}>
              <Link to={`/setting?tab=${key}`} current={key === tab}>
                {t(`tabs.${key}`)}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      {forbidden ? (
        <p className="notice" role="alert">
          {t('adminOnly')}
        </p>
      ) : personal ? (
        <PersonalTab data={personal} dialog={dialog} email={email} />
      ) : modelTab ? (
        <ModelTab data={modelTab} />
      ) : modelsSettings ? (
        <ModelsTab data={modelsSettings} />
      ) : ratelimit ? (
        <RatelimitTab data={ratelimit} />
      ) : other ? (
        <OtherTab data={other} />
      ) : pay ? (
        <PayTab data={pay} />
      ) : operation ? (
        <OperationTab data={operation} />
      ) : system ? (
        <SystemTab data={system} />
      ) : null}
    </div>
  );
}
