/**
 * The name and version an MCP client sends in `initialize` (`clientInfo`) become part of the run's agent
 * (`mcp:<name>/<version>`), which every score table, the Runs view, `loupe runs` and the reports show and group by.
 * A client is not trusted (issue 38): its name may carry markup, terminal escapes, bidi overrides, `/` to forge another
 * client's group, or megabytes of text. Loupe does not refuse such a client — the run still works and is recorded — it
 * stores a *sanitised* name and version and keeps what the client sent (escaped, cut) in the run's params as evidence.
 * Rule: letters, digits, marks, spaces and `. _ - + @ ( )` are kept; every other character (controls, `/ : < > & " '`,
 * punctuation, symbols, bidi controls) becomes `_`; whitespace runs collapse to one space; the result is trimmed and cut
 * to {@link MCP_CLIENT_NAME_MAX} characters (name) / {@link MCP_CLIENT_VERSION_MAX} (version, which keeps only
 * `[A-Za-z0-9._+-]`). An empty result is `unknown-client` / `0`.
 * Source: issue 38; MCP specification 2025-06-18 (`InitializeRequest.params.clientInfo`: `Implementation`).
 */
import { oneLine } from '../../util/text-safety.ts';

/** Longest stored client name, characters (code points). */
export const MCP_CLIENT_NAME_MAX = 64;
/** Longest stored client version, characters. */
export const MCP_CLIENT_VERSION_MAX = 32;

/** A client's identity as Loupe stores it, and what the client sent when that differs. */
export interface SanitisedClientInfo {
  name: string;
  version: string;
  /** What the client sent, controls escaped and cut to 200 characters each, when it was changed; else absent. */
  sent?: { name: string; version: string };
}

function clean(raw: unknown, allowed: RegExp, max: number, fallback: string): string {
  const s = typeof raw === 'string' ? raw.normalize('NFC') : '';
  const kept = Array.from(s, (ch) => (allowed.test(ch) ? ch : /\s/.test(ch) ? ' ' : '_'))
    .join('')
    .replace(/\s+/g, ' ')
    .trim();
  const cut = Array.from(kept).slice(0, max).join('').trim();
  return cut && /[\p{L}\p{N}]/u.test(cut) ? cut : fallback;
}

/**
 * Sanitises an MCP client's `clientInfo.name` and `clientInfo.version` before they are stored as the run's agent
 * (see the module comment for the rule).
 * @param name what the client sent as its name (any value; a non-string counts as missing).
 * @param version what it sent as its version (likewise).
 * @returns `{ name, version }`, each printable, single-line, without `/`, and at most 64 / 32 characters; `sent`
 *   holds the originals (escaped with `oneLine`, ≤ 200 characters) when either was changed. Never throws.
 * @example sanitiseClientInfo('<img src=x onerror=alert(1)>\x1b[2J', '1.0').name === '_img src_x onerror_alert(1)_ _2J'
 * Source: issue 38.
 */
export function sanitiseClientInfo(name: unknown, version: unknown): SanitisedClientInfo {
  const n = clean(name, /[\p{L}\p{M}\p{N} ._\-+@()]/u, MCP_CLIENT_NAME_MAX, 'unknown-client');
  const v = clean(version, /[A-Za-z0-9._+-]/, MCP_CLIENT_VERSION_MAX, '0');
  const changed =
    (typeof name === 'string' && name !== '' && name !== n) ||
    (typeof version === 'string' && version !== '' && version !== v);
  return changed
    ? {
        name: n,
        version: v,
        sent: {
          name: oneLine(typeof name === 'string' ? name : ''),
          version: oneLine(typeof version === 'string' ? version : ''),
        },
      }
    : { name: n, version: v };
}
