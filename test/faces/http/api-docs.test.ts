import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

let t: TestApp;
let page: string;
let pageHeaders: Record<string, unknown>;

beforeAll(async () => {
  t = await startTestApp();
  const response = await t.app.inject({ method: 'GET', url: '/docs' });
  expect(response.statusCode).toBe(200);
  page = response.body;
  pageHeaders = response.headers;
});
afterAll(async () => t?.close());

/** Every URL the page makes a browser load: scripts, stylesheets, icons and images. */
function referencedUrls(html: string): string[] {
  const urls: string[] = [];
  for (const tag of html.match(/<(script|link|img|iframe|source|embed|object)\b[^>]*>/gi) ?? []) {
    for (const match of tag.matchAll(/\b(src|href|data)\s*=\s*["']([^"']*)["']/gi)) urls.push(match[2]!);
  }
  return urls;
}

/** A URL with a scheme (https://, data:...) or a protocol-relative one (//host): anything not a path of ours. */
const OTHER_ORIGIN = /(?:\b[a-z][a-z0-9+.-]*:\/\/|["'(=\s]\/\/[a-z0-9])/i;

describe('the API reference at /docs', () => {
  it('is an HTML page with no inline script and a policy that allows scripts from this service only', () => {
    expect(pageHeaders['content-type']).toMatch(/^text\/html/);
    expect(page).toMatch(/<div id="swagger-ui">/);
    const scripts = page.match(/<script\b[^>]*>[\s\S]*?<\/script>/gi) ?? [];
    expect(scripts.length).toBeGreaterThanOrEqual(2);
    for (const script of scripts) expect(script).toMatch(/^<script\b[^>]*\bsrc="[^"]+"[^>]*><\/script>$/);
    expect(page).not.toMatch(/\bon[a-z]+\s*=/i);
    const policy = String(pageHeaders['content-security-policy']);
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("default-src 'none'");
    expect(policy).not.toMatch(/unsafe-inline|unsafe-eval|\*|https?:/);
  });

  it('loads every script, stylesheet and image from this service, and each is there', async () => {
    const urls = referencedUrls(page);
    expect(urls).toEqual(expect.arrayContaining(['/docs/swagger-ui-bundle.js', '/docs/initializer.js', '/docs/swagger-ui.css']));
    for (const url of urls) {
      expect(url, url).toMatch(/^\/(?!\/)/);
      const response = await t.app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(200);
      const expectedType = url.endsWith('.js') ? /^text\/javascript/ : url.endsWith('.css') ? /^text\/css/ : /^image\//;
      expect(response.headers['content-type'], url).toMatch(expectedType);
      expect(response.rawPayload.length, url).toBeGreaterThan(0);
    }
    // The stylesheet's own images are inline data, not fetched from anywhere.
    const css = (await t.app.inject({ method: 'GET', url: '/docs/swagger-ui.css' })).body;
    for (const [, target] of css.matchAll(/url\(\s*["']?([^"')]*)/g)) expect(target, target).toMatch(/^data:/);
    expect(css).not.toMatch(/@import/);
  });

  it('names no other host in the page or its initializer, which renders /openapi.json without the online validator', async () => {
    const initializer = (await t.app.inject({ method: 'GET', url: '/docs/initializer.js' })).body;
    expect(page).not.toMatch(OTHER_ORIGIN);
    expect(initializer).not.toMatch(OTHER_ORIGIN);
    expect(initializer).toMatch(/url: '\/openapi\.json'/);
    expect(initializer).toMatch(/validatorUrl: null/);
    // The pattern itself catches what it is for.
    for (const foreign of ['<script src="https://cdn.example/x.js">', '<link href="//cdn.example/x.css">', "url: 'http://api.example/openapi.json'"]) {
      expect(foreign).toMatch(OTHER_ORIGIN);
    }
  });

  it('serves nothing outside its list of files', async () => {
    for (const url of ['/docs/package.json', '/docs/..%2Fpackage.json', '/docs/swagger-ui-bundle.js.LICENSE.txt', '/docs/index.html']) {
      expect((await t.app.inject({ method: 'GET', url })).statusCode, url).toBe(404);
    }
  });
});
