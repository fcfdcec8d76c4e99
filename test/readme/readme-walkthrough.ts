/**
 * The shell commands of one section of a Markdown guide (the walkthrough is docs/walkthrough.md), in
 * order: every fenced `sh` block between the section's heading and the next heading of the same or a
 * higher level. The walkthrough test runs exactly these, so the guide and what works cannot drift apart.
 */
export function sectionShellBlocks(markdown: string, heading: string): string[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line.trim() === heading);
  if (start < 0) throw new Error(`README has no heading "${heading}"`);
  const level = heading.match(/^#+/)![0].length;
  const blocks: string[] = [];
  let current: string[] | null = null;
  for (const line of lines.slice(start + 1)) {
    if (current === null) {
      const heading = line.match(/^(#+) /);
      if (heading && heading[1]!.length <= level) break;
      if (/^```sh\s*$/.test(line)) current = [];
    } else if (/^```\s*$/.test(line)) {
      blocks.push(current.join('\n'));
      current = null;
    } else {
      current.push(line);
    }
  }
  if (current !== null) throw new Error(`README section "${heading}" has an unclosed code block`);
  return blocks;
}
