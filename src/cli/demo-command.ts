import type { Command } from 'commander';
import { loadConfig } from '../config/config.ts';
import { runDemo } from '../demo/demo.ts';

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('Run a full pay-date cycle on a demo data set against a sandbox payroll provider (own database, reset each run)')
    .action(async () => {
      await runDemo(loadConfig(), (line = '') => process.stdout.write(`${line}\n`));
    });
}
