/**
 * The dashboard's charts: scales and paths computed with d3-scale / d3-shape while rendering, so the server emits
 * finished <svg> (they show without JavaScript; each mark carries a <title>, the native tooltip). With JavaScript
 * ChartFrame adds a tooltip on hover and focus, and each chart is one tab stop whose marks the arrow keys walk
 * (roving tabindex); every mark has an aria-label. The data table on the page is the screen-reader alternative.
 */
import { scaleBand, scaleLinear } from 'd3-scale';
import { arc, line, pie, stack } from 'd3-shape';
import {
  type FocusEvent,
  type KeyboardEvent,
  type PointerEvent,
  type ReactNode,
  useRef,
  useState,
} from 'react';
import type { Cell, Metric } from './constants.ts';

/** Categorical colours with enough contrast on the light and the dark surface. */
export const PALETTE = [
  '#2f6fdb',
  '#e07a10',
  '#1f9d6b',
  '#c2378f',
  '#7c5ce0',
  '#0f95a8',
  '#b7791f',
  '#d14343',
  '#5f7d95',
];
/** Models drawn one by one; the rest are summed as "other". */
export const MAX_SERIES = 8;

export type ChartModel = { name: string; color: string; cells: Cell[] };

/** The top models and, when there are more, one "other" series summing the rest. */
export function chartModels(models: { name: string }[], cells: Cell[][], otherLabel: string): ChartModel[] {
  const top = models.slice(0, MAX_SERIES).map((m, i) => ({
    name: m.name,
    color: PALETTE[i % PALETTE.length] as string,
    cells: cells[i] ?? [],
  }));
  if (models.length <= MAX_SERIES) return top;
  const rest = cells.slice(MAX_SERIES);
  const width = cells[0]?.length ?? 0;
  const other = Array.from({ length: width }, (_, b) =>
    rest.reduce(
      (t, m) => {
        const c = m[b] as Cell;
        return { quota: t.quota + c.quota, tokens: t.tokens + c.tokens, count: t.count + c.count };
      },
      { quota: 0, tokens: 0, count: 0 },
    ),
  );
  return [...top, { name: otherLabel, color: PALETTE[MAX_SERIES] as string, cells: other }];
}

/** viewBox sizes: the full-width chart is wider so that its text keeps about the same size on screen. */
type Size = { W: number; H: number };
const NORMAL: Size = { W: 720, H: 280 };
const WIDE: Size = { W: 860, H: 320 };
const M = { top: 14, right: 12, bottom: 44, left: 80 };

/** Which x labels to print so that at most ~8 show. */
function labelEvery(n: number): number {
  return Math.max(1, Math.ceil(n / 8));
}

type Tip = { text: string; x: number; y: number } | null;

/**
 * A chart's frame: the figure with its caption, the JavaScript tooltip and the arrow-key walk over the marks
 * (elements with data-tip; the SVG markup itself comes from the server).
 */
export function ChartFrame({ title, children }: { title: string; children: ReactNode }) {
  const [tip, setTip] = useState<Tip>(null);
  const box = useRef<HTMLDivElement>(null);
  const show = (el: Element | null) => {
    const target = el?.closest('[data-tip]');
    const frame = box.current;
    if (!target || !frame) return setTip(null);
    const r = target.getBoundingClientRect();
    const f = frame.getBoundingClientRect();
    setTip({
      text: target.getAttribute('data-tip') ?? '',
      x: Math.min(Math.max(r.left + r.width / 2 - f.left, 60), f.width - 60),
      y: r.top - f.top,
    });
  };
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const keys: Record<string, number> = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };
    const marks = [...(box.current?.querySelectorAll<SVGElement>('[data-tip][tabindex]') ?? [])];
    const at = marks.indexOf(e.target as SVGElement);
    if (at < 0) return;
    let next = at;
    if (e.key in keys) next = Math.min(marks.length - 1, Math.max(0, at + (keys[e.key] as number)));
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = marks.length - 1;
    else if (e.key === 'Escape') return setTip(null);
    else return;
    e.preventDefault();
    for (const m of marks) m.setAttribute('tabindex', '-1');
    marks[next]?.setAttribute('tabindex', '0');
    marks[next]?.focus();
  };
  return (
    <figure className="dash-chart">
      <figcaption>{title}</figcaption>
      {/* biome-ignore lint/a11y/noStaticElementInteractions: the marks inside are the focusable elements */}
      <div
        ref={box}
        className="dash-chart-box"
        onPointerOver={(e: PointerEvent<HTMLDivElement>) => show(e.target as Element)}
        onPointerLeave={() => setTip(null)}
        onFocus={(e: FocusEvent<HTMLDivElement>) => show(e.target)}
        onBlur={() => setTip(null)}
        onKeyDown={onKeyDown}
      >
        {children}
        {tip ? (
          <div className="dash-tip" role="tooltip" style={{ left: tip.x, top: tip.y }}>
            {tip.text}
          </div>
        ) : null}
      </div>
    </figure>
  );
}

function Axes({
  size: { W, H },
  labels,
  x,
  y,
  format,
}: {
  size: Size;
  labels: string[];
  x: (i: number) => number;
  y: ReturnType<typeof scaleLinear<number, number>>;
  format: (v: number) => string;
}) {
  const every = labelEvery(labels.length);
  return (
    // biome-ignore lint/a11y/noAriaHiddenOnFocusable: decoration; the focusable marks are outside this group
    <g className="dash-axes" aria-hidden="true">
      {y.ticks(4).map((v) => (
        <g key={v}>
          <line x1={M.left} x2={W - M.right} y1={y(v)} y2={y(v)} className="dash-grid" />
          <text x={M.left - 6} y={y(v)} dy="0.32em" textAnchor="end">
            {format(v)}
          </text>
        </g>
      ))}
      {labels.map((l, i) =>
        i % every === 0 ? (
          // every other printed label is dropped on narrow screens (dash-x-alt), where the text is larger
          <text
            key={l}
            x={x(i)}
            y={H - M.bottom + 18}
            textAnchor="middle"
            className={(i / every) % 2 === 1 ? 'dash-x-alt' : undefined}
          >
            {l}
          </text>
        ) : null,
      )}
    </g>
  );
}

/** Stacked bars: one column per bucket, one segment per model. */
export function StackedBars({
  labels,
  models,
  metric,
  format,
  describe,
  ariaLabel,
  wide = false,
}: {
  labels: string[];
  models: ChartModel[];
  metric: Metric;
  format: (v: number) => string;
  /** the tooltip and aria text of a column */
  describe: (bucket: number) => string;
  ariaLabel: string;
  wide?: boolean;
}) {
  const size = wide ? WIDE : NORMAL;
  const { W, H } = size;
  const rows = labels.map((_, b) => models.map((m) => (m.cells[b] as Cell)[metric]));
  const series = stack<number[], number>()
    .keys(models.map((_, i) => i))
    .value((row, key) => row[key] ?? 0)(rows);
  const max = Math.max(1, ...rows.map((r) => r.reduce((a, v) => a + v, 0)));
  const x = scaleBand<number>()
    .domain(labels.map((_, i) => i))
    .range([M.left, W - M.right])
    .padding(0.2);
  const y = scaleLinear()
    .domain([0, max])
    .nice()
    .range([H - M.bottom, M.top]);
  return (
    // biome-ignore lint/a11y/useSemanticElements: an SVG chart is a labelled group of its marks
    <svg
      viewBox={`0 0 ${W} ${H}`}
      role="group"
      aria-label={ariaLabel}
      className={wide ? 'dash-svg dash-svg-wide' : 'dash-svg'}
    >
      <Axes size={size} labels={labels} x={(i) => (x(i) ?? 0) + x.bandwidth() / 2} y={y} format={format} />
      {series.map((s, mi) => (
        // biome-ignore lint/a11y/noAriaHiddenOnFocusable: decoration; the focusable marks are outside this group
        <g key={models[mi]?.name} fill={models[mi]?.color} aria-hidden="true">
          {s.map((d, b) =>
            d[1] > d[0] ? (
              <rect
                key={labels[b]}
                x={x(b)}
                y={y(d[1])}
                width={x.bandwidth()}
                height={Math.max(0.5, y(d[0]) - y(d[1]))}
              />
            ) : null,
          )}
        </g>
      ))}
      {labels.map((l, b) => {
        const text = describe(b);
        return (
          // biome-ignore lint/a11y/noInteractiveElementToNoninteractiveRole: a focusable data mark is an image with its value as label
          <rect
            key={l}
            className="dash-hit"
            x={(x(b) ?? 0) - (x.step() - x.bandwidth()) / 2}
            y={M.top}
            width={x.step()}
            height={H - M.top - M.bottom}
            tabIndex={b === 0 ? 0 : -1}
            role="img"
            aria-label={text}
            data-tip={text}
          >
            <title>{text}</title>
          </rect>
        );
      })}
    </svg>
  );
}

/** A line with a point per bucket. */
export function LineChart({
  labels,
  values,
  format,
  describe,
  ariaLabel,
}: {
  labels: string[];
  values: number[];
  format: (v: number) => string;
  describe: (bucket: number) => string;
  ariaLabel: string;
}) {
  const size = NORMAL;
  const { W, H } = size;
  const x = scaleBand<number>()
    .domain(labels.map((_, i) => i))
    .range([M.left, W - M.right]);
  const cx = (i: number) => (x(i) ?? 0) + x.bandwidth() / 2;
  const y = scaleLinear()
    .domain([0, Math.max(1, ...values)])
    .nice()
    .range([H - M.bottom, M.top]);
  const path =
    line<number>()
      .x((_, i) => cx(i))
      .y((v) => y(v))(values) ?? '';
  const r = labels.length > 200 ? 1.5 : labels.length > 60 ? 2.5 : 4;
  return (
    // biome-ignore lint/a11y/useSemanticElements: an SVG chart is a labelled group of its marks
    <svg viewBox={`0 0 ${W} ${H}`} role="group" aria-label={ariaLabel} className="dash-svg">
      <Axes size={size} labels={labels} x={cx} y={y} format={format} />
      <path d={path} className="dash-line" />
      {values.map((v, i) => {
        const text = describe(i);
        return (
          // biome-ignore lint/a11y/noInteractiveElementToNoninteractiveRole: a focusable data mark is an image with its value as label
          <circle
            key={labels[i]}
            className="dash-point"
            cx={cx(i)}
            cy={y(v)}
            r={r}
            tabIndex={i === 0 ? 0 : -1}
            role="img"
            aria-label={text}
            data-tip={text}
          >
            <title>{text}</title>
          </circle>
        );
      })}
    </svg>
  );
}

/** A donut of each model's share, with its legend as a list. */
export function ShareChart({
  models,
  metric,
  format,
  ariaLabel,
  sliceText,
}: {
  models: { name: string; color: string; value: number }[];
  metric: Metric;
  format: (v: number) => string;
  ariaLabel: string;
  sliceText: (m: { name: string; value: number; percent: string }) => string;
}) {
  const total = models.reduce((a, m) => a + m.value, 0);
  const arcs = pie<{ name: string; color: string; value: number }>()
    .sort(null)
    .value((m) => m.value)(models.filter((m) => m.value > 0));
  const shape = arc<(typeof arcs)[number]>().innerRadius(52).outerRadius(96);
  const percent = (v: number) => `${total > 0 ? ((v / total) * 100).toFixed(1) : '0.0'}%`;
  return (
    <div className="dash-share" data-metric={metric}>
      {/* biome-ignore lint/a11y/useSemanticElements: an SVG chart is a labelled group of its marks */}
      <svg viewBox="-100 -100 200 200" role="group" aria-label={ariaLabel} className="dash-donut">
        {arcs.map((a, i) => {
          const text = sliceText({ name: a.data.name, value: a.data.value, percent: percent(a.data.value) });
          return (
            // biome-ignore lint/a11y/noInteractiveElementToNoninteractiveRole: a focusable data mark is an image with its value as label
            <path
              key={a.data.name}
              d={shape(a) ?? ''}
              fill={a.data.color}
              tabIndex={i === 0 ? 0 : -1}
              role="img"
              aria-label={text}
              data-tip={text}
            >
              <title>{text}</title>
            </path>
          );
        })}
      </svg>
      <ul className="dash-legend">
        {models.map((m) => (
          <li key={m.name}>
            <span className="dash-swatch" style={{ background: m.color }} aria-hidden="true" />
            <span className="dash-legend-name">{m.name}</span>
            <span className="dash-legend-value">
              {format(m.value)} · {percent(m.value)}
            </span>
          </li>
        ))}
      </ul>
    </div>
  );
}
