import { z } from 'zod';
import type { SerializedResponse } from '../idempotency/idempotency-service.ts';
import type { FieldError } from '../shared/domain-errors.ts';
import { jsonPointer } from '../shared/json-pointer.ts';

export const PROBLEM_TYPE_BASE = 'https://salary-deductions.example/problems/';

export const problemDetailsSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().optional(),
    instance: z.string().optional(),
    errors: z.array(z.object({ pointer: z.string(), detail: z.string() })).optional(),
  })
  .catchall(z.unknown())
  .meta({
    id: 'ProblemDetails',
    description:
      'An RFC 9457 problem: `type` identifies the problem (branch on it, not on the prose), `status` repeats the HTTP status, ' +
      '`errors` lists the invalid fields by JSON pointer. Some problems carry members of their own (such as `required_scope`).',
    example: {
      type: 'https://salary-deductions.example/problems/validation-failed',
      title: 'Validation failed',
      status: 422,
      detail: 'The request body is invalid',
      instance: '/payments',
      errors: [{ pointer: '/payment_record/amount', detail: 'must be an integer in minor units' }],
    },
  });

export type ProblemDetails = z.infer<typeof problemDetailsSchema>;

const titles: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** The members a problem's extensions may not set (RFC 9457 section 3.1, and our `errors`). */
const RESERVED_MEMBERS = new Set(['type', 'title', 'status', 'detail', 'instance', 'errors']);

/**
 * RFC 9457 problem+json, as the error plugin answers it. Services throw domain errors, which the
 * plugin turns into one of these; the HTTP layer throws it itself only for what is HTTP's alone (a
 * header, a media type, a body it cannot read). `slug` becomes the `type` URI, so clients can
 * branch on it without parsing prose.
 */
export class HttpProblem extends Error {
  readonly status: number;
  readonly slug: string;
  readonly title: string;
  readonly detail: string | undefined;
  readonly errors: FieldError[] | undefined;
  readonly extensions: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    slug: string,
    detail?: string,
    options: {
      title?: string;
      errors?: FieldError[];
      extensions?: Record<string, unknown>;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(detail ?? slug);
    this.status = status;
    this.slug = slug;
    this.title = options.title ?? titles[status] ?? 'Error';
    this.detail = detail;
    this.errors = options.errors;
    this.extensions = options.extensions ?? {};
    this.headers = options.headers ?? {};
  }

  /**
   * `instance` is the request's URL; absent only when the request could not even be parsed.
   * Extensions come first so that none can replace a member RFC 9457 defines (or `errors`): a
   * resource's `status` goes in a member of its own, e.g. `payment_status`.
   */
  toBody(instance?: string): ProblemDetails {
    const extensions = Object.fromEntries(Object.entries(this.extensions).filter(([name]) => !RESERVED_MEMBERS.has(name)));
    return {
      ...extensions,
      type: PROBLEM_TYPE_BASE + this.slug,
      title: this.title,
      status: this.status,
      ...(this.detail === undefined ? {} : { detail: this.detail }),
      ...(instance === undefined ? {} : { instance }),
      ...(this.errors ? { errors: this.errors } : {}),
    };
  }
}

export function fieldErrorsFromZod(error: z.ZodError, prefix = ''): FieldError[] {
  return error.issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({
        pointer: jsonPointer([...issue.path, key], prefix),
        detail: 'is not a known field',
      }));
    }
    return [{ pointer: jsonPointer(issue.path, prefix), detail: issue.message }];
  });
}

/** The one place a problem becomes bytes, shared by the error handler and the idempotency store. */
export function serializeProblem(problem: HttpProblem, instance: string): SerializedResponse {
  return {
    status: problem.status,
    headers: { 'content-type': 'application/problem+json; charset=utf-8', ...problem.headers },
    body: JSON.stringify(problem.toBody(instance)),
  };
}
