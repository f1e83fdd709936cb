import type { AdminContentView } from '#app/domain/content/admin-content.ts';

/**
 * Admin-authored page content (HomePageContent, About, Notice) as prepared by `adminContentView` on the server:
 * an https URL in a frame, trusted HTML as given, or Markdown already rendered safely.
 */
export function AdminContent({ view, title }: { view: AdminContentView; title: string }) {
  if (view.kind === 'url') {
    return <iframe src={view.src} title={title} className="content-frame" />;
  }
  return (
    <div
      className={`admin-content admin-${view.kind}`}
      data-kind={view.kind}
      dangerouslySetInnerHTML={{ __html: view.html }}
    />
  );
}
