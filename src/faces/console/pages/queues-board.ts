import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { HTTPStatus } from '@bull-board/api/dist/types.js';
import type { FastifyInstance } from 'fastify';
import { consolePermits } from '../console-permissions.ts';
import { ConsoleRefusal, type ConsoleContext, type ConsolePageModule } from '../console-plugin.ts';

/**
 * bull-board's page is a script application of its own: its scripts, stylesheets, images and
 * translations come from this service, its API calls go back here, nothing else loads. Inline styles
 * are allowed for its loading screen and the style elements its scripts create (styles cannot run
 * script, and with every fetching directive at 'self' they cannot send anything elsewhere). The
 * index page also links a Google Fonts stylesheet, which this policy blocks: the board falls back
 * to local fonts. `<base href>` points at the board, hence base-uri 'self'.
 */
export const QUEUES_BOARD_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const FULL_BOARD_PATH = '/queues';
export const READ_ONLY_BOARD_PATH = '/queues-read-only';

const isReading = (method: string) => method === 'GET' || method === 'HEAD';

/** bull-board's type lists only the statuses its own handlers give; its Fastify adapter sends any. */
function statusOf(error: Error): HTTPStatus {
  const status = (error as { statusCode?: unknown }).statusCode;
  return (typeof status === 'number' && status >= 400 && status < 600 ? status : 500) as HTTPStatus;
}

/**
 * One bull-board mounted at `path` inside the console, so the console's session check, its
 * same-origin rule for the board's API calls (the board's fetches carry no form token) and its
 * no-store header apply. The queues are opened on the board's first request, not at start.
 */
function registerBoard(app: FastifyInstance, context: ConsoleContext, path: string, readOnly: boolean): void {
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(`/console${path}`);
  const board = createBullBoard({
    queues: [],
    serverAdapter,
    options: { uiConfig: { boardTitle: readOnly ? 'Queues (read only)' : 'Queues' } },
  });
  // Refusals keep their status (bull-board's own handler answers 500 to anything without `statusCode`).
  serverAdapter.setErrorHandler((error) => ({ status: statusOf(error), body: { error: error.message } }));

  let queuesLoaded: Promise<void> | undefined;
  const loadQueues = async () => {
    const queues = await context.queues.all();
    board.setQueues(queues.map((queue) => new BullMQAdapter(queue, { readOnlyMode: readOnly })));
  };

  app.register(
    async (scope) => {
      scope.addHook('onRoute', (route) => {
        route.config = { ...(route.config as object), consoleSameOriginApi: true };
      });

      scope.addHook('onRequest', async (request, reply) => {
        const session = context.session(request);
        if (readOnly) {
          if (!isReading(request.method)) throw new ConsoleRefusal(403, 'The read-only queues board changes nothing.');
        } else if (!consolePermits(session.role, 'retry_job')) {
          if (!isReading(request.method)) throw new ConsoleRefusal(403, `Your role (${session.role}) cannot act on the queues.`);
          const rest = request.url.slice(`/console${FULL_BOARD_PATH}`.length);
          return reply.redirect(`/console${READ_ONLY_BOARD_PATH}${rest.startsWith('/') ? rest : `/${rest}`}`, 303);
        }
        queuesLoaded ??= loadQueues().catch((error: unknown) => {
          queuesLoaded = undefined;
          throw error;
        });
        await queuesLoaded;
      });

      scope.addHook('onSend', async (_request, reply, payload) => {
        if (String(reply.getHeader('content-type') ?? '').startsWith('text/html')) {
          reply.header('content-security-policy', QUEUES_BOARD_CONTENT_SECURITY_POLICY);
        }
        return payload;
      });

      await scope.register(serverAdapter.registerPlugin());
    },
    { prefix: path },
  );
}

/** The BullMQ queues board: operators act on jobs at /console/queues/, everyone else reads at /console/queues-read-only/. */
export const registerQueuesBoard: ConsolePageModule = (app, context) => {
  registerBoard(app, context, FULL_BOARD_PATH, false);
  registerBoard(app, context, READ_ONLY_BOARD_PATH, true);
};
