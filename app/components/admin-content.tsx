/**
 * Admin-authored page content (HomePageContent, About, Notice). As in new-api: an https URL is embedded in a
 * frame; HTML is rendered as given (only administrators can set it); anything else is shown as text.
 * Markdown is shown as plain text (no Markdown renderer is bundled yet).
 */
export function AdminContent({ content, title }: { content: string; title: string }) {
  if (/^https:\/\/\S+$/.test(content)) {
    return <iframe src={content} title={title} className="content-frame" />;
  }
  if (/<[a-z][\s\S]*>/i.test(content)) {
    return <div className="admin-content" dangerouslySetInnerHTML={{ __html: content }} />;
  }
  return <div className="admin-content admin-text">{content}</div>;
}
