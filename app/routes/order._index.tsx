import { data, type LoaderFunctionArgs, type MetaFunction } from '@remix-run/node';
import { useLoaderData } from '@remix-run/react';
import { Role } from '@switchyard/db/entities/user.ts';
import { useTranslation } from 'react-i18next';
import { ListToolbar, PageSizeField, SearchField, SearchForm } from '#app/components/list/search-form.tsx';
import { Pagination } from '#app/components/pagination.tsx';
import { domainPageCtx } from '#app/domain/http.server.ts';
import { ordersCtx } from '#app/domain/payments/http.server.ts';
import { OrdersTable } from '#app/domain/payments/order-ui.tsx';
import { listAllOrders } from '#app/domain/payments/orders.server.ts';
import { getServices } from '#app/services.server.ts';
import { getPreferences, serializePageSize } from '#app/utils/preferences.server.ts';
import { parsePageSize } from '#app/utils/preferences.ts';

export const handle = { i18n: ['common', 'wallet'] };

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: data?.title ?? 'Orders' }];

/**
 * GET /order?user_id&email&p&page_size (admin, seed 000 §2 "manage orders"): every order, filtered by user id
 * and e-mail, newest first; the same listAllOrders as GET /api/order/adminOrderList.
 */
export async function loader({ request, context }: LoaderFunctionArgs) {
  const ctx = await domainPageCtx(request, context, { minRole: Role.Admin });
  const url = new URL(request.url);
  const userId = (url.searchParams.get('user_id') ?? '').trim().slice(0, 12);
  const email = (url.searchParams.get('email') ?? '').trim().slice(0, 255);
  const page = Math.max(1, Number.parseInt(url.searchParams.get('p') ?? '1', 10) || 1);
  const chosen = parsePageSize(url.searchParams.get('page_size'));
  const prefs = await getPreferences(request);
  const pageSize = chosen ?? prefs.pageSize;
  const result = await listAllOrders(ordersCtx(ctx, getServices(context)), {
    user_id: /^\d+$/.test(userId) ? userId : '0',
    email,
    page,
    page_size: pageSize,
  });
  const headers = new Headers({ 'Cache-Control': 'no-store' });
  if (chosen && chosen !== prefs.pageSize) headers.append('Set-Cookie', await serializePageSize(chosen));
  return data(
    {
      title: ctx.t('wallet:admin.title'),
      result: { ...result, pages: Math.max(1, Math.ceil(result.total / pageSize)) },
      filters: { userId, email },
      pageSize,
    },
    { headers },
  );
}

export default function OrdersPage() {
  const { result, filters, pageSize } = useLoaderData<typeof loader>();
  const { t } = useTranslation('wallet');
  return (
    <div className="page">
      <h1>{t('admin.title')}</h1>
      <ListToolbar>
        <SearchForm label={t('admin.filters')} submitLabel={t('admin.search')}>
          <SearchField label={t('admin.userId')} name="user_id" defaultValue={filters.userId} />
          <SearchField label={t('admin.email')} name="email" defaultValue={filters.email} wide />
          <PageSizeField label={t('bills.pageSize')} value={pageSize} />
        </SearchForm>
      </ListToolbar>
      <OrdersTable rows={result.list} admin />
      <Pagination page={result.page} pages={result.pages} total={result.total} />
    </div>
  );
}
