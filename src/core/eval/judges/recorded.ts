/**
 * The recorded-verdicts judge (`--judge file:VERDICTS.jsonl`, issue 21): verdicts read from a file, keyed by the
 * benchmark's own ids of the judged item, so LLM-judged metrics can be recomputed deterministically without a model
 * and compared with other tools' outputs (e.g. the replies in an official harness's logs).
 *
 * One JSON object per line: `{"task": "checklist-support", "id": {"entity": "1001", "item": 0, "context":
 * "message-wise"}, "verdict": {...}}` with a verdict in Loupe's shape for the task, or `"raw": "reply text"` — a judge
 * reply, read as the LLM judge reads one (JSON for the task's schema) and kept as the judgement's raw reply, so a
 * benchmark can re-read it the way its own code does (DDR `unparsed_reply`, `label_case`). `task` may be left out when
 * ids are unique across tasks. Items with no line: the identical-text shortcut where it applies, else a failed judgement
 * naming the missing id. Source: issue 21 "recorded-verdicts judge".
 */
import { readFileSync } from 'node:fs';
import { LoupeInputError } from '../../util/errors.ts';
import { canonicalJson, sha256 } from './canonical.ts';
import { extractJson, relaxToSchema, validateSchema } from './schema.ts';
import { taskDef } from './tasks.ts';
import type { Judge, JudgeContext, Judgement, JudgeInput, JudgeTaskName, JudgeVerdict } from './types.ts';

/** One line of a verdicts file, parsed. */
interface RecordedLine {
  task?: string;
  id: Record<string, string | number>;
  verdict?: unknown;
  raw?: string;
}

/** The key of a native id: its canonical JSON with every value as text (`"item": 0` and `"0"` are the same id). */
function idKey(id: Readonly<Record<string, string | number>>): string {
  return canonicalJson(Object.fromEntries(Object.entries(id).map(([k, v]) => [k, String(v)])));
}

/** A judge answering from recorded verdicts (see the module comment). */
export class RecordedJudge implements Judge {
  readonly id: string;
  readonly file: string;
  private readonly byKey = new Map<string, RecordedLine>();
  /** Items asked for that had no line, in order. */
  readonly missing: string[] = [];

  /**
   * @param file the JSONL file; `text` its content (read from `file` when omitted).
   * @throws LoupeInputError naming `file:line` for a line that is not JSON, has no `id` object, has neither `verdict`
   *   nor `raw`, or repeats an id of the same task; naming the file when it cannot be read.
   */
  constructor(file: string, text?: string) {
    this.file = file;
    this.id = `file:${file.split(/[\\/]/).pop()}`;
    let body = text;
    if (body === undefined) {
      try {
        body = readFileSync(file, 'utf8');
      } catch (e) {
        throw new LoupeInputError(file, `cannot read the verdicts file: ${(e as Error).message}`, { cause: e });
      }
    }
    body.split(/\r?\n/).forEach((line, i) => {
      if (!line.trim()) return;
      const at = `${file}:${i + 1}`;
      let v: RecordedLine;
      try {
        v = JSON.parse(line) as RecordedLine;
      } catch (e) {
        throw new LoupeInputError(at, `not JSON: ${(e as Error).message}`, { cause: e });
      }
      if (!v || typeof v !== 'object' || !v.id || typeof v.id !== 'object' || Array.isArray(v.id)) {
        throw new LoupeInputError(
          at,
          'needs an "id" object (the item\'s native id, e.g. {"entity": "1001", "item": 0, "context": "message-wise"})',
        );
      }
      if (v.verdict === undefined && typeof v.raw !== 'string') {
        throw new LoupeInputError(at, 'needs a "verdict" or a "raw" reply');
      }
      const key = `${v.task ?? ''}\u0000${idKey(v.id)}`;
      if (this.byKey.has(key)) throw new LoupeInputError(at, `repeats the id ${JSON.stringify(v.id)}`);
      this.byKey.set(key, v);
    });
  }

  /** Number of recorded lines. */
  get size(): number {
    return this.byKey.size;
  }

  async judge<K extends JudgeTaskName>(task: K, input: JudgeInput<K>, ctx: JudgeContext = {}): Promise<Judgement<K>> {
    const def = taskDef(task);
    def.validate(input);
    const inputHash = sha256(`${task}\u0000${canonicalJson(input)}`);
    const at = new Date().toISOString();
    const line = ctx.nativeId
      ? (this.byKey.get(`${task}\u0000${idKey(ctx.nativeId)}`) ?? this.byKey.get(`\u0000${idKey(ctx.nativeId)}`))
      : undefined;
    const base = { task, judgeId: this.id, inputHash, promptHash: null, input, at };
    if (!line) {
      const exact = def.exact(input);
      if (exact !== undefined) {
        return {
          ...base,
          key: sha256(`exact\u0000${inputHash}`),
          judgeId: 'exact',
          raw: null,
          verdict: exact,
          status: 'done',
        };
      }
      const what = ctx.nativeId ? JSON.stringify(ctx.nativeId) : (ctx.itemRef ?? 'an item without a native id');
      this.missing.push(what);
      return {
        ...base,
        key: sha256(`${this.id}\u0000${inputHash}`),
        raw: null,
        verdict: null,
        status: 'error',
        error: `no recorded verdict for ${what} in ${this.file}`,
      };
    }
    const key = sha256(`${this.id}\u0000${task}\u0000${idKey(line.id)}`);
    const candidate = line.verdict !== undefined ? line.verdict : extractJson(line.raw!);
    const parsed = candidate === undefined ? undefined : relaxToSchema(candidate, def.schema);
    const problems = parsed === undefined ? ['no JSON object in the reply'] : validateSchema(parsed, def.schema);
    const verdict =
      problems.length === 0 ? def.coerce(parsed) : line.raw !== undefined ? def.fallback?.(line.raw) : undefined;
    const raw = line.raw ?? null;
    if (verdict === undefined) {
      return {
        ...base,
        key,
        raw,
        verdict: null,
        status: 'error',
        error: `recorded ${line.verdict !== undefined ? 'verdict' : 'reply'} for ${JSON.stringify(line.id)} is not valid: ${problems.join('; ')}`,
      };
    }
    return { ...base, key, raw, verdict: verdict as JudgeVerdict<K>, status: 'done', cached: true };
  }
}
