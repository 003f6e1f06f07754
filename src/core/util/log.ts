/**
 * Logger port for core code. Core never touches VS Code's OutputChannel: the host passes a
 * `Logger` (the extension wraps its LogOutputChannel; the CLI writes to stderr; tests collect lines).
 */
export interface Logger {
  trace(message: string, ...args: unknown[]): void;
  debug(message: string, ...args: unknown[]): void;
  info(message: string, ...args: unknown[]): void;
  warn(message: string, ...args: unknown[]): void;
  error(message: string | Error, ...args: unknown[]): void;
}

/**
 * A logger that drops everything. Default for core functions called without one.
 * @example const log = opts.log ?? nullLogger;
 */
export const nullLogger: Logger = {
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error() {},
};

/**
 * A logger writing `[level] message` lines to a stream (stderr for the CLI).
 * @param stream anything with `write(string)`; `minLevel` drops lower levels (default `info`).
 * @returns a {@link Logger}.
 * @example const log = streamLogger(process.stderr, 'debug');
 */
export function streamLogger(
  stream: { write(s: string): unknown },
  minLevel: 'trace' | 'debug' | 'info' | 'warn' | 'error' = 'info',
): Logger {
  const order = ['trace', 'debug', 'info', 'warn', 'error'] as const;
  const min = order.indexOf(minLevel);
  const emit =
    (level: (typeof order)[number]) =>
    (message: string | Error, ...args: unknown[]) => {
      if (order.indexOf(level) < min) return;
      const text = message instanceof Error ? (message.stack ?? message.message) : message;
      const extra = args.length ? ' ' + args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ') : '';
      stream.write(`[${level}] ${text}${extra}\n`);
    };
  return { trace: emit('trace'), debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}
