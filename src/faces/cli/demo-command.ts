import type { Command } from 'commander';
import type { LoadComposition } from './composition.ts';

export function registerDemoCommand(program: Command, loadComposition: LoadComposition): void {
  program
    .command('demo')
    .description('Run a full pay-date cycle on a demo data set against a sandbox payroll provider (own database, reset each run)')
    .action(async () => {
      const composition = await loadComposition();
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { runDemo } = await import('./demo/demo.ts');
      await runDemo(loadConfig(), composition, (line = '') => process.stdout.write(`${line}\n`));
    });
}
