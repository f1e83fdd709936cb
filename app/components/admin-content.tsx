import type { AdminContentView } from '#app/domain/content/admin-content.ts';

/**
 * Admin-authored page content (HomePageContent, About, Notice) as prepared by `adminContentView` on the server:
 * an https URL in a frame (sandboxed: it cannot navigate this page), or HTML the server already sanitized
 * (admin HTML or rendered Markdown, ADR 032).
 */
export function AdminContent({ view, title }: { view: AdminContentView; title: string }) {
  if (view.kind === 'url') {
    return (
      <iframe
        src={view.src}
        title={title}
        className="content-frame"
        sandbox="allow-scripts allow-same-origin allow-forms allow-popups allow-popups-to-escape-sandbox"
        referrerPolicy="no-referrer"
      />
    );
  }
  return (
    <div
      className={`admin-content admin-${view.kind}`}
      data-kind={view.kind}
      dangerouslySetInnerHTML={{ __html: view.html }}
    />
  );
}
