import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enteredIn } from '../../../src/faces/console/console-form-refusal.ts';
import { errorPageTitle, registerConsole, type ConsolePageModule } from '../../../src/faces/console/console-plugin.ts';
import { html } from '../../../src/faces/console/html.ts';
import { registerSignInPages } from '../../../src/faces/console/pages/sign-in-pages.ts';
import type { RouteModule } from '../../../src/faces/http/app.ts';
import { ConflictError, InvalidError, MalformedRequestError } from '../../../src/platform/shared/domain-errors.ts';
import { refusalIn, signedInAs, type ConsoleBrowser } from '../../support/console.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

// What a console error page is titled, by what went wrong: a refusal (the person can fix it) says what
// was refused and keeps the form; only a fault of ours says "Something went wrong".

const FORM = '/console/probe/form';

/** Probe pages: a form the console refuses or fails on, a filter refused, a plain bug. */
const probes: ConsolePageModule = (app) => {
  app.get('/probe/fault', async () => {
    throw new Error('a bug in a page');
  });
  app.get('/probe/filter', async () => {
    throw new MalformedRequestError('invalid-date', 'date must be a date as YYYY-MM-DD');
  });
  app.post(
    '/probe/form',
    {
      config: {
        consoleForm: {
          refused: 'The probe was not saved',
          fieldId: (name) => `probe-${name}`,
          defaultField: 'name',
          page: async (_request, _reply, refusal) => {
            const entered = enteredIn(refusal, FORM);
            return {
              title: 'Probe',
              body: html`<form method="post" action="${FORM}"><label for="probe-name">Name</label><input id="probe-name" name="name" value="${entered.value('name')}"${entered.invalid('probe-name')}></form>`,
            };
          },
        },
      },
    },
    async (request) => {
      const { name = '' } = request.body as { name?: string };
      if (name === 'bug') throw new Error('a bug behind a form');
      if (name === 'taken') throw new ConflictError('concurrent-request', 'Someone saved a probe of that name a moment ago');
      throw new InvalidError('validation-failed', 'Give a name of at least 8 letters');
    },
  );
  app.post('/probe/plain', async () => {
    throw new ConflictError('concurrent-request', 'It was done already');
  });
};

const consoleWithProbes: RouteModule = (app, deps) => {
  app.register(registerConsole([registerSignInPages, probes]), { prefix: '/console', config: deps.config, db: deps.db, redis: deps.redis, tokens: deps.tokens });
};

const titleOf = (body: string) => body.match(/<title>(.*?) · /)?.[1];

let t: TestApp;
let browser: ConsoleBrowser;
beforeAll(async () => {
  t = await startTestApp({ routeModules: [consoleWithProbes] });
  ({ browser } = await signedInAs(t.app, t.db, 'operator'));
  // A page of the session (its sign-out form), whose form token the posts use: these probes have no overview.
  await browser.get('/console/probe/filter');
});
afterAll(async () => t?.close());

describe('errorPageTitle', () => {
  it.each([
    [401, 'GET', 'Signed out'],
    [403, 'POST', 'Not allowed'],
    [404, 'GET', 'Not found'],
    [413, 'POST', 'Too large'],
    [429, 'POST', 'Too many attempts'],
    [400, 'GET', 'Check the address or filters'],
    [400, 'POST', 'Check the form'],
    [422, 'POST', 'Check the form'],
    [409, 'POST', 'Not done'],
    [500, 'GET', 'Something went wrong'],
    [500, 'POST', 'Something went wrong'],
    [503, 'GET', 'Something went wrong'],
  ])('titles a %i answering %s "%s"', (status, method, title) => {
    expect(errorPageTitle(status, method)).toBe(title);
  });

  it('titles a refusal of a form by what did not happen, and a fault behind the form as a fault', () => {
    const form = { refused: 'The probe was not saved' };
    expect(errorPageTitle(422, 'POST', form)).toBe('The probe was not saved');
    expect(errorPageTitle(409, 'POST', form)).toBe('The probe was not saved');
    expect(errorPageTitle(500, 'POST', form)).toBe('Something went wrong');
  });
});

describe('console error pages', () => {
  it('shows a refused form on its page again: the reason linking to its field, what was typed, a fresh form token', async () => {
    const refused = await browser.post(FORM, { name: 'short' });
    expect(refused.statusCode).toBe(422);
    expect(titleOf(refused.body)).toBe('Error: Probe');
    expect(refused.body).not.toContain('Something went wrong');
    expect(refusalIn(refused.body)).toEqual({ heading: 'The probe was not saved', reasons: [{ text: 'Give a name of at least 8 letters', field: 'probe-name' }] });
    expect(refused.body).toContain('<input id="probe-name" name="name" value="short" aria-invalid="true">');

    // The page shown again carries the form token the next post uses.
    const conflict = await browser.post(FORM, { name: 'taken' });
    expect(conflict.statusCode).toBe(409);
    expect(refusalIn(conflict.body)?.heading).toBe('The probe was not saved');
  });

  it('says "Something went wrong" for a fault of ours, and only then', async () => {
    const fault = await browser.get('/console/probe/fault');
    expect(fault.statusCode).toBe(500);
    expect(titleOf(fault.body)).toBe('Something went wrong');
    expect(fault.body).not.toContain('a bug in a page');

    const behindForm = await browser.post(FORM, { name: 'bug' });
    expect(behindForm.statusCode).toBe(500);
    expect(titleOf(behindForm.body)).toBe('Something went wrong');
    expect(refusalIn(behindForm.body)).toBeUndefined();

    const filter = await browser.get('/console/probe/filter');
    expect(filter.statusCode).toBe(400);
    expect(titleOf(filter.body)).toBe('Check the address or filters');

    const plain = await browser.post('/console/probe/plain');
    expect(plain.statusCode).toBe(409);
    expect(titleOf(plain.body)).toBe('Not done');
    expect(plain.body).toContain('It was done already');
    expect(plain.body).toContain('Nothing was changed. Go back to the form, correct it and send it again.');
  });
});
