import { Command } from 'commander';
import { ConfigError, loadConfig } from '../config/config.ts';
import { registerClientCommands } from './clients-command.ts';
import { registerDeductionCommands } from './deductions-commands.ts';
import { registerDemoCommand } from './demo-command.ts';
import { registerExportCommands } from './export-commands.ts';
import { registerNightlyCommand } from './nightly-command.ts';
import { registerPayoutCommands } from './payout-commands.ts';
import { registerServiceCommands } from './service-commands.ts';
import { registerStatusCommand } from './status-command.ts';
import { registerWebhookCommands } from './webhook-commands.ts';

const program = new Command()
  .name('deductions')
  .description('Salary-deduction payments service: API, nightly pay-date worker and operator tools')
  .showHelpAfterError();

registerServiceCommands(program);
registerClientCommands(program);
registerNightlyCommand(program);
registerDeductionCommands(program);
registerDemoCommand(program);
registerPayoutCommands(program);
registerExportCommands(program);
registerWebhookCommands(program);
registerStatusCommand(program);

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
