#!/usr/bin/env node
// The `deductions` command. TypeScript runs through tsx's loader, so there is no build step
// between a checkout and a running service.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../src/cli/main.ts');
// The routes and job processors load only for the commands that run them (serve, work, nightly, ...).
await runCli(async () => (await import('./composition.ts')).composition, process.argv);
