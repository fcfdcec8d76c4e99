import { HttpProblem } from './problem.ts';

/**
 * A streamed request body as it arrives, refused with 413 as soon as it passes the limit: a file
 * route reads its upload without ever holding it whole, so the limit is counted on the way.
 */
export async function* withinLimit(body: AsyncIterable<Buffer>, limit: number, what: string): AsyncGenerator<Buffer> {
  let seen = 0;
  for await (const chunk of body) {
    seen += chunk.length;
    if (seen > limit) throw new HttpProblem(413, 'body-too-large', `${what} may be at most ${limit} bytes`);
    yield chunk;
  }
}

/** Whether a Content-Type (or an Accept range) names text/csv, whatever its parameters. */
export const isCsv = (contentType: string | undefined) => contentType?.split(';')[0]?.trim().toLowerCase() === 'text/csv';
