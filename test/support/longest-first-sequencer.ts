import { readFileSync, statSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Two cores and three workers: the suite ends when its longest file does, so the long files must start
// first. Vitest orders by the durations it cached on this machine, and a fresh clone (CI) has none, so it
// falls back to file size, which puts a short file that runs for a minute (the walkthrough) last. This
// orders by the cached duration where there is one and otherwise by the one recorded in
// test/durations.json (`npm run test:durations` writes it from the cache after a run).

const recorded: Record<string, number> = JSON.parse(readFileSync(new URL('../durations.json', import.meta.url), 'utf8'));

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const known = (spec: TestSpecification) => {
      const key = `${spec.project.name}:${relative(root, spec.moduleId)}`;
      const cached = this.ctx.cache.getFileTestResults(key);
      return { failed: cached?.failed ?? false, duration: cached?.duration ?? recorded[key] ?? 0, size: statSync(spec.moduleId).size };
    };
    const facts = new Map(files.map((spec) => [spec, known(spec)]));
    return [...files].sort((a, b) => {
      if (a.project.name !== b.project.name) return a.project.name < b.project.name ? -1 : 1;
      const fa = facts.get(a)!;
      const fb = facts.get(b)!;
      if (fa.failed !== fb.failed) return fa.failed ? -1 : 1;
      return fb.duration - fa.duration || fb.size - fa.size;
    });
  }
}
