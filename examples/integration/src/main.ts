// Runs the walkthrough against an installation, with a webhook receiver on this machine:
//
//   DEDUCTIONS_URL=http://127.0.0.1:3000 CLIENT_ID=... CLIENT_SECRET=... API_KEY=... \
//   PERSON_NATIONAL_REGISTRATION_NUMBER=QQ123456C PERSON_DATE_OF_BIRTH=1988-03-14 \
//   PERSON_GIVEN_NAME=Alex PERSON_FAMILY_NAME=Taylor npx tsx src/main.ts
//
// WEBHOOK_PORT (default: any free one) and WEBHOOK_HOST (default 127.0.0.1) say where the receiver
// listens; WEBHOOK_URL, the address the service reaches it at when that is not the same (a tunnel).
// Prints each step, then the results as JSON; on a refusal, the problem the service answered.
import { billerClient, ApiError } from './client.ts';
import { runWalkthrough } from './walkthrough.ts';
import { startWebhookReceiver } from './webhooks.ts';

function setting(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set (see the README)`);
  return value;
}

const api = billerClient(setting('DEDUCTIONS_URL'), { clientId: setting('CLIENT_ID'), clientSecret: setting('CLIENT_SECRET'), apiKey: setting('API_KEY') });
const receiver = await startWebhookReceiver({
  host: process.env.WEBHOOK_HOST || '127.0.0.1',
  port: Number(process.env.WEBHOOK_PORT || 0),
});
try {
  const result = await runWalkthrough({
    api,
    person: {
      national_registration_number: setting('PERSON_NATIONAL_REGISTRATION_NUMBER'),
      date_of_birth: setting('PERSON_DATE_OF_BIRTH'),
      given_name: setting('PERSON_GIVEN_NAME'),
      family_name: setting('PERSON_FAMILY_NAME'),
    },
    receiver,
    ...(process.env.WEBHOOK_URL ? { webhookUrl: process.env.WEBHOOK_URL } : {}),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} catch (error) {
  if (!(error instanceof ApiError)) throw error;
  process.stderr.write(`${error.message}\n${JSON.stringify(error.problem, null, 2)}\n`);
  process.exitCode = 1;
} finally {
  await receiver.close();
}
