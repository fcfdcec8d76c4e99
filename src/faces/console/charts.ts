import { html, type Html } from './html.ts';

/**
 * Charts as inline SVG, built on the server: no script, nothing to load. Each is a figure with a
 * caption, an image with a title and description for screen readers, series told apart by pattern
 * or dash as well as colour, and the same numbers as a table under a disclosure.
 */

export interface ChartSeries {
  name: string;
  /** One integer per category (minor units, milliseconds, counts); negative values draw as zero. */
  values: readonly number[];
}

export interface ChartSpec {
  /** Unique on the page: prefixes the ids of the chart's title, description and patterns. */
  id: string;
  title: string;
  description: string;
  /** What each category is (column heading of the data table), e.g. "Pay date". */
  categoryHeading: string;
  categories: readonly string[];
  series: readonly ChartSeries[];
  formatValue: (value: number) => string;
}

export const CHART_WIDTH = 640;
export const CHART_HEIGHT = 260;
const MARGIN = { top: 16, right: 96, bottom: 40, left: 96 };
export const PLOT = {
  left: MARGIN.left,
  top: MARGIN.top,
  width: CHART_WIDTH - MARGIN.left - MARGIN.right,
  height: CHART_HEIGHT - MARGIN.top - MARGIN.bottom,
  bottom: CHART_HEIGHT - MARGIN.bottom,
};
const Y_TICKS = 4;
/** At most this many category labels under the axis; the table has all of them. */
const MAX_CATEGORY_LABELS = 8;

/** Fill patterns: solid, diagonal hatch, dots, cross-hatch, horizontal stripes; each readable in greyscale. */
const BAR_STYLES = [
  { colour: '#1f4e79', pattern: null },
  { colour: '#b35806', pattern: 'hatch' },
  { colour: '#2d6a2d', pattern: 'dots' },
  { colour: '#5e3c99', pattern: 'cross' },
  { colour: '#006d77', pattern: 'stripes' },
] as const;
const LINE_DASHES = ['', '8 4', '2 3', '12 3 2 3'] as const;

/** A pixel position to two decimals: stable markup, no float noise. */
const px = (value: number): number => Math.round(value * 100) / 100;

/** The axis maximum: the largest value, or 1 when there is nothing above zero (no division by zero). */
function scaleMaximum(series: readonly ChartSeries[]): number {
  let maximum = 0;
  for (const { values } of series) for (const value of values) if (value > maximum) maximum = value;
  return maximum > 0 ? maximum : 1;
}

/** How many times the largest of the other values a value must exceed before a line chart draws it off the scale. */
export const OUTLIER_FACTOR = 5;

/**
 * The axis maximum of a line chart that clips outliers: the largest value, unless a few values (a
 * tenth of them at most, one at least) are more than OUTLIER_FACTOR times the largest of the others,
 * then the largest value that is not. Values above it are off the scale. One 6-hour catch-up among
 * 2-second runs would otherwise flatten every other point onto the zero line; clipping a tenth at
 * most keeps the scale honest when long values are the rule rather than the exception. Pure.
 */
export function clippedMaximum(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const largest = sorted.at(-1) ?? 0;
  if (largest <= 0) return 1;
  const mayClip = Math.max(1, Math.floor(sorted.length / 10));
  const largestKept = sorted[sorted.length - 1 - mayClip];
  if (largestKept === undefined || largestKept <= 0) return largest;
  return sorted.filter((value) => value <= largestKept * OUTLIER_FACTOR).at(-1)!;
}

/** Height in pixels of a value on an axis from zero to `maximum`. */
function heightOf(value: number, maximum: number): number {
  return value <= 0 ? 0 : (value / maximum) * PLOT.height;
}

/** Integer tick values from zero to the maximum (rounded, so money ticks stay whole minor units). */
function tickValues(maximum: number): number[] {
  const ticks: number[] = [];
  for (let index = 0; index <= Y_TICKS; index += 1) ticks.push(Math.round((maximum / Y_TICKS) * index));
  return [...new Set(ticks)];
}

function yAxis(spec: ChartSpec, maximum: number): Html {
  // Nothing above zero: one line at zero, no made-up scale.
  const ticks = spec.series.some((series) => series.values.some((value) => value > 0)) ? tickValues(maximum) : [0];
  return html`<g class="axis">${ticks.map((tick) => {
    const y = px(PLOT.bottom - heightOf(tick, maximum));
    return html`<line x1="${PLOT.left}" y1="${y}" x2="${PLOT.left + PLOT.width}" y2="${y}" stroke="#d0d0d0" stroke-width="1"/><text x="${PLOT.left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle" font-size="11">${spec.formatValue(tick)}</text>`;
  })}</g>`;
}

/** Average width of one 11px character, to shorten labels that would run into their neighbours. */
const CHARACTER_WIDTH = 6.5;

function categoryLabels(categories: readonly string[], centreOf: (index: number) => number): Html {
  const every = Math.ceil(categories.length / MAX_CATEGORY_LABELS);
  const room = Math.max(4, Math.floor(((PLOT.width / categories.length) * every) / CHARACTER_WIDTH));
  return html`<g class="categories">${categories.map((category, index) =>
    index % every === 0
      ? html`<text x="${px(centreOf(index))}" y="${PLOT.bottom + 16}" text-anchor="middle" font-size="11">${category.length > room ? `${category.slice(0, room - 1)}…` : category}</text>`
      : '',
  )}</g>`;
}

function dataTable(spec: ChartSpec): Html {
  return html`<details><summary>${spec.title}: the numbers</summary>
<table>
<caption>${spec.title}</caption>
<thead><tr><th scope="col">${spec.categoryHeading}</th>${spec.series.map((series) => html`<th scope="col">${series.name}</th>`)}</tr></thead>
<tbody>${spec.categories.map(
    (category, index) =>
      html`<tr><th scope="row">${category}</th>${spec.series.map((series) => html`<td>${series.values[index] === undefined ? '—' : spec.formatValue(series.values[index]!)}</td>`)}</tr>`,
  )}</tbody>
</table>
</details>`;
}

/** `note`, when given, follows the description and stands under the image: what the picture alone does not say. */
function figure(spec: ChartSpec, svgBody: Html, note?: string): Html {
  const titleId = `${spec.id}-title`;
  const descId = `${spec.id}-desc`;
  const image =
    spec.categories.length === 0
      ? html`<p class="empty">No data yet.</p>`
      : html`<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 ${CHART_WIDTH} ${CHART_HEIGHT}" width="100%" aria-labelledby="${titleId} ${descId}">
<title id="${titleId}">${spec.title}</title>
<desc id="${descId}">${spec.description}${note ? ` ${note}` : ''}</desc>
${svgBody}
</svg>${note ? html`\n<p class="chart-note">${note}</p>` : ''}`;
  return html`<figure class="chart" id="${spec.id}">
<figcaption>${spec.title}</figcaption>
${image}
${spec.categories.length === 0 ? '' : dataTable(spec)}
</figure>`;
}

function barFill(spec: ChartSpec, seriesIndex: number): string {
  const style = BAR_STYLES[seriesIndex % BAR_STYLES.length]!;
  return style.pattern === null ? style.colour : `url(#${spec.id}-pattern-${seriesIndex})`;
}

function barPatterns(spec: ChartSpec): Html {
  return html`<defs>${spec.series.map((_series, index) => {
    const style = BAR_STYLES[index % BAR_STYLES.length]!;
    const id = `${spec.id}-pattern-${index}`;
    if (style.pattern === 'hatch') {
      return html`<pattern id="${id}" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#ffffff"/><rect width="3" height="6" fill="${style.colour}"/></pattern>`;
    }
    if (style.pattern === 'dots') {
      return html`<pattern id="${id}" width="5" height="5" patternUnits="userSpaceOnUse"><rect width="5" height="5" fill="#ffffff"/><circle cx="2.5" cy="2.5" r="1.6" fill="${style.colour}"/></pattern>`;
    }
    if (style.pattern === 'cross') {
      return html`<pattern id="${id}" width="6" height="6" patternUnits="userSpaceOnUse"><rect width="6" height="6" fill="#ffffff"/><path d="M0 3H6M3 0V6" stroke="${style.colour}" stroke-width="1.5"/></pattern>`;
    }
    if (style.pattern === 'stripes') {
      return html`<pattern id="${id}" width="4" height="4" patternUnits="userSpaceOnUse"><rect width="4" height="4" fill="#ffffff"/><rect width="4" height="2" fill="${style.colour}"/></pattern>`;
    }
    return '';
  })}</defs>`;
}

function legend(spec: ChartSpec, swatch: (seriesIndex: number, x: number, y: number) => Html): Html {
  return html`<g class="legend">${spec.series.map((series, index) => {
    const y = PLOT.top + index * 18;
    const x = PLOT.left + PLOT.width + 8;
    return html`${swatch(index, x, y)}<text x="${x + 18}" y="${y + 6}" dominant-baseline="middle" font-size="11">${series.name}</text>`;
  })}</g>`;
}

/**
 * Bars side by side per category, one per series, heights proportional to the values on an axis from
 * zero; each bar carries its exact figure as a tooltip title.
 */
export function groupedBarChart(spec: ChartSpec): Html {
  if (spec.categories.length === 0) return figure(spec, html``);
  const maximum = scaleMaximum(spec.series);
  const groupWidth = spec.categories.length === 0 ? 0 : PLOT.width / spec.categories.length;
  const barWidth = spec.series.length === 0 ? 0 : (groupWidth * 0.8) / spec.series.length;
  const groupStart = (index: number) => PLOT.left + index * groupWidth + groupWidth * 0.1;
  const bars = spec.categories.map(
    (category, categoryIndex) =>
      html`<g class="group">${spec.series.map((series, seriesIndex) => {
        const value = series.values[categoryIndex] ?? 0;
        const height = heightOf(value, maximum);
        return html`<rect x="${px(groupStart(categoryIndex) + seriesIndex * barWidth)}" y="${px(PLOT.bottom - height)}" width="${px(barWidth)}" height="${px(height)}" fill="${barFill(spec, seriesIndex)}" stroke="${BAR_STYLES[seriesIndex % BAR_STYLES.length]!.colour}" stroke-width="1"><title>${series.name}, ${category}: ${spec.formatValue(value)}</title></rect>`;
      })}</g>`,
  );
  return figure(
    spec,
    html`${barPatterns(spec)}
${yAxis(spec, maximum)}
<g class="bars">${bars}</g>
${categoryLabels(spec.categories, (index) => PLOT.left + index * groupWidth + groupWidth / 2)}
<line x1="${PLOT.left}" y1="${PLOT.bottom}" x2="${PLOT.left + PLOT.width}" y2="${PLOT.bottom}" stroke="#333333" stroke-width="1"/>
${legend(spec, (index, x, y) => html`<rect x="${x}" y="${y}" width="12" height="12" fill="${barFill(spec, index)}" stroke="${BAR_STYLES[index % BAR_STYLES.length]!.colour}" stroke-width="1"/>`)}`,
  );
}

export interface LineChartSpec extends ChartSpec {
  /**
   * Scale the axis to the typical values (clippedMaximum) and draw the few far above them off the
   * scale: above the plot, as an upward triangle labelled with the real value. The table under the
   * chart keeps every value as it is.
   */
  clipOutliers?: boolean;
}

/** Where an off-scale point sits: in the margin above the plot, clear of the top grid line. */
export const OFF_SCALE_Y = PLOT.top - 10;

/**
 * One line per series across the categories (oldest first), told apart by dash pattern, each point a
 * marker with its exact figure as a tooltip title, and the series name written at its last point.
 */
export function lineChart(spec: LineChartSpec): Html {
  if (spec.categories.length === 0) return figure(spec, html``);
  const maximum = spec.clipOutliers ? clippedMaximum(spec.series.flatMap((series) => series.values)) : scaleMaximum(spec.series);
  const step = spec.categories.length <= 1 ? 0 : PLOT.width / (spec.categories.length - 1);
  const xOf = (index: number) => (spec.categories.length <= 1 ? PLOT.left + PLOT.width / 2 : PLOT.left + index * step);
  const colourOf = (index: number) => BAR_STYLES[index % BAR_STYLES.length]!.colour;
  const dashOf = (index: number) => LINE_DASHES[index % LINE_DASHES.length]!;
  const offScale: string[] = [];
  const lines = spec.series.map((series, seriesIndex) => {
    const points = spec.categories.map((category, index) => {
      const value = series.values[index] ?? 0;
      const off = value > maximum;
      if (off) offScale.push(`${spec.series.length > 1 ? `${series.name}, ` : ''}${category}: ${spec.formatValue(value)}`);
      return { x: px(xOf(index)), y: off ? OFF_SCALE_Y : px(PLOT.bottom - heightOf(value, maximum)), value, off };
    });
    const last = points[points.length - 1]!;
    const marker = (point: (typeof points)[number], index: number) => {
      const title = html`<title>${series.name}, ${spec.categories[index]!}: ${spec.formatValue(point.value)}${point.off ? ' (off the scale)' : ''}</title>`;
      if (!point.off) return html`<circle cx="${point.x}" cy="${point.y}" r="3" fill="${colourOf(seriesIndex)}">${title}</circle>`;
      // Labelled towards the plot's middle, so a label at either end stays inside the image.
      const leftward = point.x > PLOT.left + PLOT.width / 2;
      return html`<polygon class="off-scale" points="${point.x},${px(point.y - 5)} ${px(point.x - 5)},${px(point.y + 4)} ${px(point.x + 5)},${px(point.y + 4)}" fill="${colourOf(seriesIndex)}">${title}</polygon><text x="${px(point.x + (leftward ? -8 : 8))}" y="${point.y}" text-anchor="${leftward ? 'end' : 'start'}" dominant-baseline="middle" font-size="11">${spec.formatValue(point.value)}</text>`;
    };
    return html`<g class="series"><polyline points="${points.map((point) => `${point.x},${point.y}`).join(' ')}" fill="none" stroke="${colourOf(seriesIndex)}" stroke-width="2"${dashOf(seriesIndex) ? html` stroke-dasharray="${dashOf(seriesIndex)}"` : ''}/>${points.map(marker)}<text x="${px(last.x + 6)}" y="${last.y}" dominant-baseline="middle" font-size="11">${series.name}</text></g>`;
  });
  const note = offScale.length === 0 ? undefined : `Off the scale, drawn above the top line: ${offScale.join('; ')}.`;
  return figure(
    spec,
    html`${yAxis(spec, maximum)}
<g class="lines">${lines}</g>
${categoryLabels(spec.categories, xOf)}
<line x1="${PLOT.left}" y1="${PLOT.bottom}" x2="${PLOT.left + PLOT.width}" y2="${PLOT.bottom}" stroke="#333333" stroke-width="1"/>`,
    note,
  );
}
