import { useTranslation } from 'react-i18next';
import { useToast } from '#app/components/toaster.tsx';
import { Button } from '#app/components/ui/button.tsx';
import { useHydrated } from '#app/utils/hydrated.ts';

/** Copies `text`; says so in a toast, or asks to copy by hand when the clipboard refuses (seed 001 §8). */
export function CopyButton({ text, what }: { text: string; what: string }) {
  const { t } = useTranslation('content');
  const { notify } = useToast();
  const hydrated = useHydrated();
  if (!hydrated) return null;
  const preview = text.length > 60 ? `${text.slice(0, 57)}...` : text;
  return (
    <Button
      variant="ghost"
      aria-label={t('copy.label', { what })}
      onPress={async () => {
        try {
          await navigator.clipboard.writeText(text);
          notify({ type: 'success', message: t('copy.copied', { text: preview }) });
        } catch {
          notify({ type: 'error', message: t('copy.failed') });
        }
      }}
    >
      {t('copy.button')}
    </Button>
  );
}

/** A titled code sample with a copy button (JavaScript); without JavaScript the text is selectable as usual. */
export function CodeBlock({ title, code, testId }: { title: string; code: string; testId?: string }) {
  return (
    <figure className="code-block" data-testid={testId}>
      <figcaption className="code-block-head">
        <span>{title}</span>
        <CopyButton text={code} what={title} />
      </figcaption>
      <pre>
        <code>{code}</code>
      </pre>
    </figure>
  );
}
