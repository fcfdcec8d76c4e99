import { z } from 'zod';
import type { SerializedResponse } from '../../platform/idempotency/idempotency-service.ts';
import type { FieldError } from '../../platform/shared/domain-errors.ts';
import { jsonPointer } from '../../platform/shared/json-pointer.ts';
import { problemCatalogue, problemCodeEntry, problemCodes, type ProblemCode } from '../../platform/shared/problem-codes.ts';

export const PROBLEM_TYPE_BASE = 'https://salary-deductions.example/problems/';

/** The statuses a code is answered with, the usual one first. */
export function problemStatuses(code: ProblemCode): number[] {
  const { status } = problemCodeEntry(code);
  return typeof status === 'number' ? [status] : [...status];
}

/** The codes the HTTP API answers, as /openapi.json lists them: the console's, the CLI's and the sandbox provider's own are left out. */
export const apiProblemCodes: readonly ProblemCode[] = problemCodes.filter((code) => problemCodeEntry(code).internal === undefined);

/** The catalogue as the ProblemDetails schema documents it: a table in `type`'s description, and `x-problem-codes`. */
const problemCodesTable = [
  '| Code | Status | Title | When, and what to do |',
  '| --- | --- | --- | --- |',
  ...apiProblemCodes.map((code) => {
    const { title, description } = problemCodeEntry(code);
    return `| \`${code}\` | ${problemStatuses(code).join(', ')} | ${title} | ${description.replaceAll('|', '\\|')} |`;
  }),
].join('\n');

export const problemDetailsSchema = z
  .object({
    // A table, not an `enum`: a client generated from a closed enum would break on the next new code.
    type: z.string().meta({
      description:
        `\`${PROBLEM_TYPE_BASE}\` followed by the problem's code; \`title\` is the code's title. Branch on the code: new codes may be added, ` +
        `existing ones are never renamed. The codes (also in \`x-problem-codes\` of this schema):\n\n${problemCodesTable}`,
      example: `${PROBLEM_TYPE_BASE}validation-failed`,
    }),
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
    'x-problem-codes': Object.fromEntries(
      apiProblemCodes.map((code) => {
        const { title, description } = problemCodeEntry(code);
        return [code, { type: PROBLEM_TYPE_BASE + code, title, status: problemStatuses(code), description }];
      }),
    ),
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

/** Only for a code cast past ProblemCode (tests make some up): the status's reason phrase. */
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
 * branch on it without parsing prose; it is a code of the catalogue (shared/problem-codes.ts),
 * which gives the title.
 */
export class HttpProblem extends Error {
  readonly status: number;
  readonly slug: ProblemCode;
  readonly title: string;
  readonly detail: string | undefined;
  readonly errors: FieldError[] | undefined;
  readonly extensions: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    slug: ProblemCode,
    detail?: string,
    options: {
      errors?: FieldError[];
      extensions?: Record<string, unknown>;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(detail ?? slug);
    this.status = status;
    this.slug = slug;
    this.title = (Object.hasOwn(problemCatalogue, slug) ? problemCodeEntry(slug).title : undefined) ?? titles[status] ?? 'Error';
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
