import type { Command } from 'commander';
import { loadConfig } from '../config/config.ts';
import { runDemo } from './demo/demo.ts';
import type { Composition } from '../cli/composition.ts';

export function registerDemoCommand(program: Command, composition: Composition): void {
  program
    .command('demo')
    .description('Run a full pay-date cycle on a demo data set against a sandbox payroll provider (own database, reset each run)')
    .action(async () => {
      await runDemo(loadConfig(), composition, (line = '') => process.stdout.write(`${line}\n`));
    });
}
