import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';

/**
 * The links of the project's Markdown (README.md, BENCHMARKS.md, CONTRIBUTING.md, CHANGELOG.md and
 * docs/), checked as GitHub renders them: a relative link names a file or folder inside the
 * repository, and an anchor names a heading of the file it points at. Links in code blocks and code
 * spans are text, not links.
 */

export interface MarkdownLink {
  file: string;
  line: number;
  target: string;
}

/** The Markdown files whose links are checked, relative to the repository root. */
export function projectMarkdownFiles(root: string): string[] {
  const top = ['README.md', 'BENCHMARKS.md', 'CONTRIBUTING.md', 'CHANGELOG.md'].filter((file) => existsSync(join(root, file)));
  const walk = (folder: string): string[] =>
    readdirSync(join(root, folder), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(join(folder, entry.name)) : entry.name.endsWith('.md') ? [join(folder, entry.name)] : [],
    );
  return [...top, ...(existsSync(join(root, 'docs')) ? walk('docs') : [])].map((file) => file.split(sep).join('/'));
}

/** Each line outside fenced code blocks, with its number, and with code spans blanked out. */
function proseLines(markdown: string): Array<{ line: number; text: string }> {
  const lines: Array<{ line: number; text: string }> = [];
  let fenced = false;
  markdown.split('\n').forEach((text, index) => {
    if (/^\s*(```|~~~)/.test(text)) {
      fenced = !fenced;
      return;
    }
    if (!fenced) lines.push({ line: index + 1, text: text.replace(/`[^`]*`/g, (span) => ' '.repeat(span.length)) });
  });
  return lines;
}

/** Every inline link `[text](target)` and image of a Markdown text, outside code. */
export function markdownLinks(file: string, markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { line, text } of proseLines(markdown)) {
    for (const match of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ file, line, target: match[1]! });
  }
  return links;
}

/** The anchor GitHub gives a heading's text: lower case, punctuation dropped, each space a hyphen. */
export function headingSlug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

/** The anchors of a Markdown text's headings (outside code blocks), repeats numbered as GitHub does. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const text of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(text)) fenced = !fenced;
    const heading = !fenced && text.match(/^#{1,6}\s+(.*?)\s*#*\s*$/);
    if (!heading) continue;
    const slug = headingSlug(heading[1]!);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** What is wrong with each link of the project's Markdown that does not resolve, one line each. */
export function brokenLinks(root: string, files: readonly string[] = projectMarkdownFiles(root)): string[] {
  const problems: string[] = [];
  const anchorsOf = new Map<string, Set<string>>();
  const anchors = (file: string) => {
    let found = anchorsOf.get(file);
    if (!found) anchorsOf.set(file, (found = headingAnchors(readFileSync(join(root, file), 'utf8'))));
    return found;
  };
  for (const file of files) {
    for (const link of markdownLinks(file, readFileSync(join(root, file), 'utf8'))) {
      const where = `${link.file}:${link.line} (${link.target})`;
      if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) continue; // https:, mailto: ...: not a file of ours
      const [path = '', anchor] = link.target.split('#', 2);
      const target =
        path === ''
          ? file
          : normalize(join(dirname(file), decodeURIComponent(path)))
              .split(sep)
              .join('/');
      if (target === '..' || target.startsWith('../') || relative(root, join(root, target)).startsWith('..')) {
        problems.push(`${where}: points outside the repository`);
        continue;
      }
      if (!existsSync(join(root, target))) {
        problems.push(`${where}: ${target} does not exist`);
        continue;
      }
      if (anchor === undefined) continue;
      if (statSync(join(root, target)).isDirectory() || !target.endsWith('.md')) {
        problems.push(`${where}: an anchor into ${target}, which is not a Markdown file`);
      } else if (!anchors(target).has(anchor)) {
        problems.push(`${where}: ${target} has no heading #${anchor}`);
      }
    }
  }
  return problems;
}

/** The files under docs/ that no link of the given Markdown files reaches. */
export function unlinkedDocs(root: string, from: readonly string[]): string[] {
  const linked = new Set<string>();
  for (const file of from) {
    for (const link of markdownLinks(file, readFileSync(join(root, file), 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) continue;
      const [path = ''] = link.target.split('#', 2);
      if (path !== '')
        linked.add(
          normalize(join(dirname(file), decodeURIComponent(path)))
            .split(sep)
            .join('/'),
        );
    }
  }
  return projectMarkdownFiles(root).filter((file) => file.startsWith('docs/') && !linked.has(file));
}
