import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { projectPath } from '../../platform/shared/project-files.ts';

/** Swagger UI as its package installs it: nothing is fetched from anywhere but this service. */
const swaggerUiDirectory = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const pageDirectory = projectPath('src', 'faces', 'http', 'api-docs');

const mediaTypes = {
  css: 'text/css; charset=utf-8',
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  map: 'application/json; charset=utf-8',
  png: 'image/png',
} as const;

/**
 * What /docs serves, by name: the page and its initializer (ours), and the Swagger UI files the page
 * and its stylesheet refer to. A fixed list, not a directory: no request path reaches the disk.
 */
const files: Record<string, { path: string; type: keyof typeof mediaTypes }> = {
  'initializer.js': { path: join(pageDirectory, 'initializer.js'), type: 'js' },
  'swagger-ui-bundle.js': { path: join(swaggerUiDirectory, 'swagger-ui-bundle.js'), type: 'js' },
  'swagger-ui.css': { path: join(swaggerUiDirectory, 'swagger-ui.css'), type: 'css' },
  'swagger-ui.css.map': { path: join(swaggerUiDirectory, 'swagger-ui.css.map'), type: 'map' },
  'index.css': { path: join(swaggerUiDirectory, 'index.css'), type: 'css' },
  'favicon-16x16.png': { path: join(swaggerUiDirectory, 'favicon-16x16.png'), type: 'png' },
  'favicon-32x32.png': { path: join(swaggerUiDirectory, 'favicon-32x32.png'), type: 'png' },
};

/**
 * The one page this service serves, so its policy is its own, as strict as Swagger UI allows:
 * scripts, styles and the spec only from here (no inline script, no eval), images from here or
 * the stylesheet's data: icons, and no framing.
 */
export const API_DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The API reference at /docs: Swagger UI (swagger-ui-dist) rendering /openapi.json. Not an API operation. */
export function registerApiDocs(app: FastifyInstance): void {
  const serve = (url: string, file: { path: string; type: keyof typeof mediaTypes }, cacheControl: string) =>
    app.get(url, async (_request, reply) =>
      reply
        .header('content-security-policy', API_DOCS_CONTENT_SECURITY_POLICY)
        .header('cache-control', cacheControl)
        .type(mediaTypes[file.type])
        .send(createReadStream(file.path)),
    );
  // The page is small and changes with a deployment; the files are the installed package's.
  serve('/docs', { path: join(pageDirectory, 'index.html'), type: 'html' }, 'no-cache');
  for (const [name, file] of Object.entries(files)) serve(`/docs/${name}`, file, 'public, max-age=3600');
}
