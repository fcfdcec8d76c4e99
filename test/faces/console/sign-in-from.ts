import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { csrfTokenIn } from '../../support/console.ts';

/** The error line of a console page. */
export const errorOf = (body: string) => body.match(/<p class="error"[^>]*>(.*?)<\/p>/s)?.[1];

/**
 * A browser at a given address (app.inject's remoteAddress, which is request.ip without a trusted
 * proxy): keeps its cookies, the device cookie a sign-in sets included, and signs in through the form.
 */
export class BrowserAt {
  readonly cookies: Record<string, string> = {};

  constructor(
    private readonly app: FastifyInstance,
    readonly address: string,
  ) {}

  private remember(response: LightMyRequestResponse): LightMyRequestResponse {
    for (const cookie of response.cookies) {
      if (cookie.value === '' || (cookie.maxAge !== undefined && cookie.maxAge <= 0)) delete this.cookies[cookie.name];
      else this.cookies[cookie.name] = cookie.value;
    }
    return response;
  }

  /** The sign-in form's token, from a fresh load of the form. */
  async formToken(): Promise<string> {
    const form = this.remember(await this.app.inject({ method: 'GET', url: '/console/sign-in', cookies: this.cookies, remoteAddress: this.address }));
    return csrfTokenIn(form.body);
  }

  /** Posts the sign-in form as it is (a raw urlencoded body, so a test may repeat a field). */
  async postSignIn(body: string): Promise<LightMyRequestResponse> {
    return this.remember(
      await this.app.inject({
        method: 'POST',
        url: '/console/sign-in',
        cookies: this.cookies,
        remoteAddress: this.address,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: body,
      }),
    );
  }

  async signIn(email: string, password: string): Promise<LightMyRequestResponse> {
    const token = await this.formToken();
    return this.postSignIn(new URLSearchParams({ _csrf: token, email, password }).toString());
  }

  /** Forgets the session (a device cookie stays, as a browser keeps it after signing out). */
  forgetSession(): void {
    delete this.cookies['__Host-console_session'];
  }
}

export const sessionCookieOf = (response: LightMyRequestResponse) => response.cookies.find((cookie) => cookie.name === '__Host-console_session' && cookie.value !== '');
