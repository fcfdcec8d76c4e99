import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import type { Composition } from '../../../src/faces/cli/composition.ts';
import { buildProgram, COMMAND_MODULES, commandModulesFor, registerCommandModule } from '../../../src/faces/cli/main.ts';

// A command line loads only the modules of its command, by the table in src/faces/cli/main.ts. A table that
// names a command its module does not define (or misses one it does) would leave that command out of
// the program it runs in: these tests hold the table to what each module registers.

/** Never started: registering commands only keeps references to the routes and the worker starter. */
const composition: Composition = {
  routes: [],
  startWorkers: () => {
    throw new Error('not started in these tests');
  },
};
let compositionLoads = 0;
const loadComposition = async () => {
  compositionLoads += 1;
  return composition;
};

const topLevelNames = (program: Command) => program.commands.map((command) => command.name());

describe('the command modules table', () => {
  it.each(COMMAND_MODULES.map((module) => [module.commands.join(', '), module] as const))(
    'names exactly the top-level commands its module defines: %s',
    async (_names, module) => {
      const program = new Command();
      await registerCommandModule(program, module, async () => composition);
      expect(topLevelNames(program)).toEqual([...module.commands]);
    },
  );
});

describe('which modules a command line loads', () => {
  it('loads only the modules defining the command, in the table order', () => {
    expect(commandModulesFor(['clients', 'list'])).toEqual(COMMAND_MODULES.filter((m) => m.commands.includes('clients')));
    const exportModules = commandModulesFor(['export', 'payouts', '--date', '2026-12-01']);
    expect(exportModules).toHaveLength(2);
    expect(exportModules.every((m) => m.commands.includes('export'))).toBe(true);
    expect(commandModulesFor(['--help', 'payrolls'])).toEqual(COMMAND_MODULES.filter((m) => m.commands.includes('payrolls')));
  });

  it('loads every module for help, no command, or a word no module defines', () => {
    expect(commandModulesFor([])).toBe(COMMAND_MODULES);
    expect(commandModulesFor(['--help'])).toBe(COMMAND_MODULES);
    expect(commandModulesFor(['help', 'clients'])).toBe(COMMAND_MODULES);
    expect(commandModulesFor(['clinets', 'list'])).toBe(COMMAND_MODULES);
  });

  it('builds the same commands for a command line as the whole program has for that command', async () => {
    const whole = await buildProgram(loadComposition, []);
    const allNames = COMMAND_MODULES.flatMap((module) => module.commands);
    expect(topLevelNames(whole).sort()).toEqual([...new Set(allNames)].sort());
    for (const name of new Set(allNames)) {
      const program = await buildProgram(loadComposition, [name]);
      const subcommands = (p: Command) => p.commands.filter((c) => c.name() === name).map((c) => [c.name(), c.commands.map((s) => s.name())]);
      expect(subcommands(program)).toEqual(subcommands(whole));
      expect(topLevelNames(program).every((n) => COMMAND_MODULES.some((m) => m.commands.includes(n) && m.commands.includes(name)))).toBe(true);
    }
  });

  it('loads the composition only for a command that runs the API or the workers', async () => {
    compositionLoads = 0;
    await buildProgram(loadComposition, ['clients', 'list']);
    await buildProgram(loadComposition, ['employees', 'import']);
    expect(compositionLoads).toBe(0);
    await buildProgram(loadComposition, ['serve']);
    expect(compositionLoads).toBe(1);
    await buildProgram(loadComposition, ['export', 'instructions']);
    expect(compositionLoads).toBe(2);
  });
});
