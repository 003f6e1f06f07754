/**
 * Error for bad user input: a missing or malformed file, a bad argument. `subject` names the thing
 * at fault (a path, `file:row:column`, an option name) so messages always say what to fix.
 * Source: DEVELOPERS.md "Bad input ... gets a clear error naming the thing at fault".
 */
export class LoupeInputError extends Error {
  readonly subject: string;
  constructor(subject: string, message: string, options?: { cause?: unknown }) {
    super(`${subject}: ${message}`, options);
    this.name = 'LoupeInputError';
    this.subject = subject;
  }
}

/**
 * Turns any thrown value into a one-line message.
 * @param e anything caught.
 * @returns the message (never throws).
 * @example errorMessage(new Error('x')) === 'x'
 */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (typeof e === 'string') return e;
  try {
    return JSON.stringify(e);
  } catch {
    return String(e);
  }
}
