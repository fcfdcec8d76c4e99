import { describe, expect, it } from 'vitest';
import { groupedBarChart, lineChart, PLOT, type ChartSpec } from '../../../src/faces/console/charts.ts';

const pence = (value: number) => `${value}p`;

function spec(overrides: Partial<ChartSpec> = {}): ChartSpec {
  return {
    id: 'chart',
    title: 'Totals',
    description: 'Totals per day',
    categoryHeading: 'Day',
    categories: ['Mon', 'Tue'],
    series: [
      { name: 'Requested', values: [100, 50] },
      { name: 'Collected', values: [0, 25] },
    ],
    formatValue: pence,
    ...overrides,
  };
}

const rects = (markup: string) =>
  [...markup.matchAll(/<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="([^"]+)"[^>]*><title>([^<]*)<\/title>/g)].map((match) => ({
    x: Number(match[1]),
    y: Number(match[2]),
    width: Number(match[3]),
    height: Number(match[4]),
    fill: match[5],
    title: match[6],
  }));

describe('grouped bar chart', () => {
  it('is a captioned figure with an accessible image and the numbers as a table', () => {
    const markup = groupedBarChart(spec()).value;
    expect(markup).toMatch(/^<figure class="chart" id="chart">\n<figcaption>Totals<\/figcaption>\n<svg [^>]*role="img"[^>]*aria-labelledby="chart-title chart-desc">/);
    expect(markup).toContain('<title id="chart-title">Totals</title>\n<desc id="chart-desc">Totals per day</desc>');
    expect(markup).toContain(
      '<thead><tr><th scope="col">Day</th><th scope="col">Requested</th><th scope="col">Collected</th></tr></thead>\n' +
        '<tbody><tr><th scope="row">Mon</th><td>100p</td><td>0p</td></tr><tr><th scope="row">Tue</th><td>50p</td><td>25p</td></tr></tbody>',
    );
    expect(markup).toMatch(/<details><summary>Totals: the numbers<\/summary>/);
    expect(markup).not.toContain('<script');
  });

  it('draws bars in proportion to their values from a common baseline, told apart by pattern', () => {
    const bars = rects(groupedBarChart(spec()).value);
    expect(bars.map((bar) => bar.title)).toEqual(['Requested, Mon: 100p', 'Collected, Mon: 0p', 'Requested, Tue: 50p', 'Collected, Tue: 25p']);
    expect(bars.map((bar) => bar.height)).toEqual([PLOT.height, 0, PLOT.height / 2, PLOT.height / 4]);
    for (const bar of bars) expect(bar.y + bar.height).toBe(PLOT.bottom);
    expect(new Set(bars.map((bar) => bar.width)).size).toBe(1);
    // Side by side within a group, groups left to right.
    expect(bars[1]!.x).toBeCloseTo(bars[0]!.x + bars[0]!.width, 2);
    expect(bars[2]!.x).toBeGreaterThan(bars[1]!.x + bars[1]!.width);
    // The first series solid, the second hatched: distinct without colour.
    expect(bars[0]!.fill).toBe('#1f4e79');
    expect(bars[1]!.fill).toBe('url(#chart-pattern-1)');
    expect(groupedBarChart(spec()).value).toContain('<pattern id="chart-pattern-1"');
  });

  it('escapes every label', () => {
    const markup = groupedBarChart(
      spec({
        title: '<script>alert(1)</script>',
        description: 'a & b',
        categoryHeading: '"day"',
        categories: ['<b>Mon</b>', 'Tue'],
        series: [{ name: "O'Brien <i>", values: [1, 2] }],
      }),
    ).value;
    expect(markup).not.toContain('<script>');
    expect(markup).not.toContain('<b>');
    expect(markup).not.toContain('<i>');
    expect(markup).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(markup).toContain('<desc id="chart-desc">a &amp; b</desc>');
    expect(markup).toContain('<th scope="col">&quot;day&quot;</th>');
    expect(markup).toContain('<th scope="row">&lt;b&gt;Mon&lt;/b&gt;</th>');
    expect(markup).toContain('O&#39;Brien &lt;i&gt;, &lt;b&gt;Mon&lt;/b&gt;: 1p');
  });

  it('draws all-zero series flat, with one zero tick and no NaN', () => {
    const markup = groupedBarChart(spec({ series: [{ name: 'Collected', values: [0, 0] }] })).value;
    expect(markup).not.toContain('NaN');
    expect(markup).not.toContain('Infinity');
    expect(rects(markup).map((bar) => [bar.y, bar.height])).toEqual([
      [PLOT.bottom, 0],
      [PLOT.bottom, 0],
    ]);
    expect([...markup.matchAll(/text-anchor="end"[^>]*>([^<]*)</g)].map((match) => match[1])).toEqual(['0p']);
  });

  it('shows no image for no categories, and no NaN for a series without bars', () => {
    const empty = groupedBarChart(spec({ categories: [], series: [] })).value;
    expect(empty).toContain('<figcaption>Totals</figcaption>');
    expect(empty).toContain('<p class="empty">No data yet.</p>');
    expect(empty).not.toContain('<svg');
    const noSeries = groupedBarChart(spec({ series: [] })).value;
    expect(noSeries).not.toContain('NaN');
  });

  it('labels the axis with whole values between zero and the largest', () => {
    const markup = groupedBarChart(spec({ series: [{ name: 'Count', values: [3, 1] }] })).value;
    expect([...markup.matchAll(/text-anchor="end"[^>]*>([^<]*)</g)].map((match) => match[1])).toEqual(['0p', '1p', '2p', '3p']);
  });
});

describe('line chart', () => {
  it('draws one dashed-or-solid polyline per series through proportional points, named at its end', () => {
    const markup = lineChart(
      spec({
        categories: ['1', '2', '3'],
        series: [
          { name: 'Fast', values: [10, 20, 40] },
          { name: 'Slow', values: [40, 0, 20] },
        ],
      }),
    ).value;
    const lines = [...markup.matchAll(/<polyline points="([^"]+)" fill="none" stroke="[^"]+" stroke-width="2"( stroke-dasharray="[^"]+")?\/>/g)];
    expect(lines).toHaveLength(2);
    const points = lines.map((line) => line[1]!.split(' ').map((pair) => pair.split(',').map(Number)));
    const right = PLOT.left + PLOT.width;
    expect(points[0]).toEqual([
      [PLOT.left, PLOT.bottom - PLOT.height / 4],
      [PLOT.left + PLOT.width / 2, PLOT.bottom - PLOT.height / 2],
      [right, PLOT.top],
    ]);
    expect(points[1]).toEqual([
      [PLOT.left, PLOT.top],
      [PLOT.left + PLOT.width / 2, PLOT.bottom],
      [right, PLOT.bottom - PLOT.height / 2],
    ]);
    expect(lines[0]![2]).toBeUndefined();
    expect(lines[1]![2]).toBe(' stroke-dasharray="8 4"');
    expect(markup).toContain(`<text x="${right + 6}" y="${PLOT.top}" dominant-baseline="middle" font-size="11">Fast</text>`);
    expect(markup).toContain('<title>Slow, 2: 0p</title>');
    expect(markup).toContain('<tr><th scope="row">3</th><td>40p</td><td>20p</td></tr>');
  });

  it('shows no image for no categories', () => {
    const markup = lineChart(spec({ categories: [], series: [{ name: 'Duration', values: [] }] })).value;
    expect(markup).toContain('<p class="empty">No data yet.</p>');
    expect(markup).not.toContain('<svg');
  });

  it('handles a single point and zero values without NaN', () => {
    const markup = lineChart(spec({ categories: ['only'], series: [{ name: 'Duration', values: [0] }] })).value;
    expect(markup).not.toContain('NaN');
    expect(markup).toContain(`<polyline points="${PLOT.left + PLOT.width / 2},${PLOT.bottom}"`);
  });
});
