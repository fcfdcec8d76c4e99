import { Command, InvalidArgumentError } from 'commander';
import { ConfigError, loadConfig } from '../config/config.ts';
import { registerClientCommands } from './clients-command.ts';
import { registerServiceCommands } from './service-commands.ts';

const program = new Command()
  .name('deductions')
  .description('Salary-deduction payments service: API, nightly pay-date worker and operator tools')
  .showHelpAfterError();

registerServiceCommands(program);
registerClientCommands(program);

export function parseDateOption(value: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) {
    throw new InvalidArgumentError('expected a date as YYYY-MM-DD');
  }
  return value;
}

try {
  loadConfig();
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(78);
  }
  throw error;
}
