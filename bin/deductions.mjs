#!/usr/bin/env node
// The `deductions` command. TypeScript runs through tsx's loader, so there is no build step
// between a checkout and a running service.
import { register } from 'tsx/esm/api';

register();
const { runDeductions } = await import('./composition.ts');
await runDeductions(process.argv);
