import { useTranslation } from 'react-i18next';

const CSS =
  '.new-year-egg{position:relative}' +
  '.new-year-egg summary{list-style:none;cursor:pointer;font-size:1.25rem;padding:0 .25rem;border-radius:6px}' +
  '.new-year-egg summary::-webkit-details-marker{display:none}' +
  '.new-year-egg summary:focus-visible{outline:2px solid var(--primary);outline-offset:2px}' +
  '.new-year-card{position:absolute;right:0;top:calc(100% + .4rem);z-index:40;width:max-content;max-width:min(18rem,80vw);' +
  'padding:.75rem 1rem;background:var(--surface);border:1px solid var(--border);border-radius:8px;' +
  'box-shadow:0 8px 24px rgba(0,0,0,.18);text-align:center}' +
  '.new-year-burst{display:block;font-size:1.6rem;letter-spacing:.3rem}' +
  '.new-year-egg[open] .new-year-burst span{display:inline-block;animation:new-year-pop 1s ease-out 3}' +
  '.new-year-burst span:nth-child(2){animation-delay:.15s}.new-year-burst span:nth-child(3){animation-delay:.3s}' +
  '@keyframes new-year-pop{0%{transform:scale(.2) translateY(.6rem);opacity:0}60%{transform:scale(1.25);opacity:1}100%{transform:scale(1);opacity:1}}' +
  '@media (prefers-reduced-motion:reduce){.new-year-egg[open] .new-year-burst span{animation:none}}';

/**
 * The new-year easter egg (seed 001 §2.2: on 1 January). As in new-api, a festive button in the header that
 * sets off fireworks with a greeting; here a disclosure (details/summary: keyboard and screen-reader usable,
 * no JavaScript needed) whose card plays a short CSS burst (still under prefers-reduced-motion).
 */
export function NewYearEgg() {
  const { t } = useTranslation('content');
  return (
    <details className="new-year-egg" data-testid="new-year-egg">
      <style>{CSS}</style>
      <summary aria-label={t('newYear.button')} title={t('newYear.button')}>
        <span aria-hidden="true">🧨</span>
      </summary>
      <div className="new-year-card" role="status">
        <span className="new-year-burst" aria-hidden="true">
          <span>🎆</span>
          <span>🎉</span>
          <span>🎇</span>
        </span>
        <p style={{ margin: '.4rem 0 0' }}>{t('newYear.greeting')}</p>
      </div>
    </details>
  );
}
