import { type LoaderFunctionArgs, redirect } from '@remix-run/node';

/** /channel/edit/{id} (seed §2.1's entry): the edit form lives at /channel/{id}/edit. */
export function loader({ params }: LoaderFunctionArgs) {
  const id = /^\d{1,9}$/.test(params.id ?? '') ? params.id : '0';
  return redirect(`/channel/${id}/edit`);
}
