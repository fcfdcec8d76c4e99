import { describe, expect, it } from 'vitest';
import { CHART_WIDTH, clippedMaximum, groupedBarChart, lineChart, OFF_SCALE_Y, OUTLIER_FACTOR, PLOT, type ChartSpec } from '../../../src/faces/console/charts.ts';

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

  it('tells five series apart without colour, each legend entry inside the image, over a dozen pay dates', () => {
    const names = ['Requested', 'Deducted', 'Collected', 'Received', 'Paid out'];
    const categories = Array.from({ length: 12 }, (_unused, index) => `2026-${String(index + 1).padStart(2, '0')}-28`);
    const markup = groupedBarChart(
      spec({ categories, series: names.map((name, seriesIndex) => ({ name, values: categories.map((_category, index) => 10_000 - seriesIndex * 1_000 + index) })) }),
    ).value;
    const bars = rects(markup);
    expect(bars).toHaveLength(12 * 5);
    // One fill per series, the first solid and the other four a pattern each, defined once.
    const fills = names.map((_name, seriesIndex) => bars[seriesIndex]!.fill);
    expect(new Set(fills).size).toBe(5);
    expect(fills.slice(1)).toEqual([1, 2, 3, 4].map((index) => `url(#chart-pattern-${index})`));
    for (const index of [1, 2, 3, 4]) expect(markup.match(new RegExp(`<pattern id="chart-pattern-${index}"`, 'g'))).toHaveLength(1);
    // Every bar of a group side by side within the group's share of the plot, wide enough to show its pattern.
    const groupWidth = PLOT.width / 12;
    for (const [index, bar] of bars.entries()) {
      const group = Math.floor(index / 5);
      expect(bar.x).toBeGreaterThanOrEqual(PLOT.left + group * groupWidth);
      expect(bar.x + bar.width).toBeLessThanOrEqual(PLOT.left + (group + 1) * groupWidth + 0.01);
      expect(bar.width).toBeGreaterThanOrEqual(5);
    }
    // The legend: one entry per series, one under the other, the longest name inside the image.
    const legend = [...markup.matchAll(/<text x="([\d.]+)" y="([\d.]+)" dominant-baseline="middle" font-size="11">([^<]+)<\/text>/g)];
    expect(legend.map((entry) => entry[3])).toEqual(names);
    expect(new Set(legend.map((entry) => entry[2])).size).toBe(5);
    for (const entry of legend) expect(Number(entry[1]) + entry[3]!.length * 6.5).toBeLessThanOrEqual(CHART_WIDTH);
    expect(Number(legend.at(-1)![2])).toBeLessThan(PLOT.bottom);
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

describe('clippedMaximum', () => {
  const seconds = (count: number, value: number) => Array.from({ length: count }, () => value);

  it.each<[string, number[], number]>([
    ['nothing above zero', [0, 0], 1],
    ['no values', [], 1],
    ['one value', [7], 7],
    ['values of one size', [2_000, 2_400, 1_900, 2_100], 2_400],
    ['a long run among short ones', [...seconds(29, 2_000), 21_600_000], 2_000],
    ['one of two far above the other', [2_000, 21_600_000], 2_000],
    ['two long runs among twenty', [...seconds(18, 2_000), 2_500, 21_600_000, 18_000_000], 2_500],
    ['long runs more than a tenth of them: they are the rule, nothing clipped', [...seconds(16, 2_000), ...seconds(4, 21_600_000)], 21_600_000],
    ['a longer run within the factor', [2_000, 2_000, 2_000, 2_000 * OUTLIER_FACTOR], 2_000 * OUTLIER_FACTOR],
    ['a longer run just past the factor', [2_000, 2_000, 2_000, 2_000 * OUTLIER_FACTOR + 1], 2_000],
    ['zeros below a long run: no scale to keep', [0, 0, 0, 5_000], 5_000],
  ])('%s', (_name, values, maximum) => {
    expect(clippedMaximum(values)).toBe(maximum);
  });

  it('clips a tenth of the values at most, and keeps every value it does not clip on the scale', () => {
    for (let count = 1; count <= 40; count += 1) {
      for (const outliers of [0, 1, 2, 3, 4, 5]) {
        const values = [...Array.from({ length: count }, (_unused, index) => 1_000 + index * 37), ...seconds(outliers, 50_000_000)];
        const maximum = clippedMaximum(values);
        const clipped = values.filter((value) => value > maximum);
        expect(clipped.length).toBeLessThanOrEqual(Math.max(1, Math.floor(values.length / 10)));
        expect(maximum).toBe(Math.max(...values.filter((value) => value <= maximum)));
      }
    }
  });
});

describe('a line chart clipping outliers', () => {
  const durations = (clipOutliers: boolean) =>
    lineChart({
      ...spec({ categories: ['1', '2', '3', '4'], series: [{ name: 'Duration', values: [2_000, 4_000, 21_600_000, 3_000] }] }),
      formatValue: (value) => `${value} ms`,
      clipOutliers,
    }).value;

  it('scales to the typical values and draws the outlier above the plot, marked and labelled with its real value', () => {
    const markup = durations(true);
    const [points] = [...markup.matchAll(/<polyline points="([^"]+)"/g)].map((line) => line[1]!.split(' ').map((pair) => pair.split(',').map(Number)));
    const step = PLOT.width / 3;
    expect(points).toEqual(
      [
        [PLOT.left, PLOT.bottom - PLOT.height / 2],
        [PLOT.left + step, PLOT.top],
        [PLOT.left + 2 * step, OFF_SCALE_Y],
        [PLOT.left + 3 * step, PLOT.bottom - (PLOT.height * 3) / 4],
      ].map(([x, y]) => [Math.round(x! * 100) / 100, Math.round(y! * 100) / 100]),
    );
    expect(OFF_SCALE_Y).toBeLessThan(PLOT.top);
    expect(OFF_SCALE_Y).toBeGreaterThan(0);
    expect(markup.match(/<polygon class="off-scale"/g)).toHaveLength(1);
    expect(markup).toContain('<title>Duration, 3: 21600000 ms (off the scale)</title>');
    expect(markup).toMatch(/<text x="[\d.]+" y="6" text-anchor="end" dominant-baseline="middle" font-size="11">21600000 ms<\/text>/);
    expect(markup).toContain('<p class="chart-note">Off the scale, drawn above the top line: 3: 21600000 ms.</p>');
    expect(markup).toContain('<desc id="chart-desc">Totals per day Off the scale, drawn above the top line: 3: 21600000 ms.</desc>');
    // The axis tops at the largest typical value; the table keeps every real value.
    expect([...markup.matchAll(/text-anchor="end" dominant-baseline="middle" font-size="11">([^<]*)</g)].map((match) => match[1])).toContain('4000 ms');
    expect(markup).toContain('<tr><th scope="row">3</th><td>21600000 ms</td></tr>');
    expect(markup).not.toContain('NaN');
  });

  it('is not clipped unless asked: one long run flattens the others', () => {
    const markup = durations(false);
    expect(markup).not.toContain('off-scale');
    expect(markup).not.toContain('chart-note');
    const [points] = [...markup.matchAll(/<polyline points="([^"]+)"/g)].map((line) => line[1]!.split(' ').map((pair) => pair.split(',').map(Number)));
    expect(points![2]![1]).toBe(PLOT.top);
    expect(PLOT.bottom - points![1]![1]!).toBeLessThan(1);
  });

  it('draws nothing off the scale when no value is far above the others', () => {
    const markup = lineChart({ ...spec({ categories: ['1', '2'], series: [{ name: 'Duration', values: [2_000, 3_000] }] }), clipOutliers: true }).value;
    expect(markup).not.toContain('off-scale');
    expect(markup).toContain(`<circle cx="${PLOT.left + PLOT.width}" cy="${PLOT.top}" r="3"`);
  });
});
