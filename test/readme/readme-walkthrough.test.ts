import { describe, expect, it } from 'vitest';
import { sectionShellBlocks } from './readme-walkthrough.ts';

describe('sectionShellBlocks', () => {
  const readme = [
    '# Title',
    '## Before',
    '```sh',
    'echo before',
    '```',
    '## Set up an installation',
    'Prose.',
    '```sh',
    'echo one',
    'echo two',
    '```',
    '```json',
    '{"not": "shell"}',
    '```',
    '### A step',
    '```sh',
    'echo three',
    '```',
    '## After',
    '```sh',
    'echo after',
    '```',
  ].join('\n');

  it('takes every sh block of the section, subsections included, and nothing else', () => {
    expect(sectionShellBlocks(readme, '## Set up an installation')).toEqual(['echo one\necho two', 'echo three']);
  });

  it('names a missing section or an unclosed block', () => {
    expect(() => sectionShellBlocks(readme, '## Missing')).toThrow('README has no heading "## Missing"');
    expect(() => sectionShellBlocks('## S\n```sh\necho', '## S')).toThrow('unclosed code block');
  });
});
