import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { brokenLinks, headingAnchors, headingSlug, markdownLinks, projectMarkdownFiles, unlinkedDocs } from './markdown-links.ts';

// The README is the entry and docs/ holds the guides: every relative link and anchor between them
// must resolve, none may leave the repository, and every guide must be on the README's map.

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('the project Markdown', () => {
  it('covers the README, BENCHMARKS, CONTRIBUTING, CHANGELOG and every file under docs/', () => {
    const files = projectMarkdownFiles(root);
    expect(files).toEqual(expect.arrayContaining(['README.md', 'BENCHMARKS.md', 'CONTRIBUTING.md', 'CHANGELOG.md', 'docs/glossary.md', 'docs/walkthrough.md']));
    expect(files.filter((file) => file.startsWith('docs/decisions/')).length).toBeGreaterThanOrEqual(7);
  });

  it('has no link or anchor that does not resolve, and none that leaves the repository', () => {
    expect(brokenLinks(root)).toEqual([]);
  });

  it('puts every guide on the README map, and every decision record in the decisions index', () => {
    expect(unlinkedDocs(root, ['README.md', 'docs/decisions/README.md'])).toEqual([]);
    const index = readFileSync(`${root}/docs/decisions/README.md`, 'utf8');
    for (const record of projectMarkdownFiles(root).filter((file) => /^docs\/decisions\/\d{4}-/.test(file))) {
      expect(index, record).toContain(`(${record.slice('docs/decisions/'.length)})`);
    }
  });
});

describe('the link checker', () => {
  it('takes links outside code only', () => {
    const text = ['[a](x.md) `[b](y.md)`', '```', '[c](z.md)', '```', '[d](w.md#h "title") ![e](i.png)'].join('\n');
    expect(markdownLinks('f.md', text).map((link) => link.target)).toEqual(['x.md', 'w.md#h', 'i.png']);
  });

  it('names a link outside the repository, a missing file and a missing anchor', () => {
    const scratch = mkdtempSync(join(tmpdir(), 'docs-links-'));
    try {
      mkdirSync(join(scratch, 'docs'));
      writeFileSync(join(scratch, 'docs', 'guide.md'), '# Guide\n## A part\n');
      writeFileSync(
        join(scratch, 'README.md'),
        '[up](../shared/x.md) [gone](docs/gone.md) [part](docs/guide.md#a-part) [no part](docs/guide.md#b-part) [web](https://example.com)\n',
      );
      expect(brokenLinks(scratch)).toEqual([
        'README.md:1 (../shared/x.md): points outside the repository',
        'README.md:1 (docs/gone.md): docs/gone.md does not exist',
        'README.md:1 (docs/guide.md#b-part): docs/guide.md has no heading #b-part',
      ]);
      expect(unlinkedDocs(scratch, ['README.md'])).toEqual([]);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it("gives headings GitHub's anchors, repeats numbered", () => {
    expect(headingSlug("Sandbox data never mixes with live data, nor with another sandbox's")).toBe('sandbox-data-never-mixes-with-live-data-nor-with-another-sandboxs');
    expect(headingSlug('Cash: bank statements, remittances and funded payouts')).toBe('cash-bank-statements-remittances-and-funded-payouts');
    expect(headingSlug('Figures (2026-11-22, full scale)')).toBe('figures-2026-11-22-full-scale');
    expect(headingSlug('`npm test` and the `db` project')).toBe('npm-test-and-the-db-project');
    expect([...headingAnchors('# A\n## A\n```\n# A\n```\n### A b')]).toEqual(['a', 'a-1', 'a-b']);
  });
});
