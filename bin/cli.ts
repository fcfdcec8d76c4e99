import { runCli } from '../src/faces/cli/main.ts';

// The command line as the build bundles it (dist/cli.mjs): the routes and job processors load only
// for the commands that run them (serve, work, nightly, ...).
await runCli(async () => (await import('./composition.ts')).composition, process.argv);
