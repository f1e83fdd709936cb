import { redirect } from '@remix-run/node';

/** /channel/add (seed §2.1's entry): the create form lives at /channel/new. */
export function loader() {
  return redirect('/channel/new');
}
