/**
 * Small labels the panels show (issue 42 defect 10): a run's live elapsed time, an answer step's question, a path cut
 * in the middle, the small-sample warning next to an agreement statistic. Pure functions, unit-tested in Node.
 */

/**
 * The duration a run header shows: while the run is running, the time since it started (`now` − `startedAt`);
 * otherwise its recorded duration.
 * @param run `status`, `startedAt` (ISO or null), `durationMs`; `now` epoch ms.
 * @returns milliseconds, never negative.
 */
export function runElapsedMs(
  run: { status: string; startedAt: string | null; durationMs: number },
  now: number,
): number {
  if (run.status === 'running' && run.startedAt) {
    const t = Date.parse(run.startedAt);
    if (Number.isFinite(t)) return Math.max(run.durationMs, now - t, 0);
  }
  return Math.max(0, run.durationMs);
}

/**
 * A short form of an item id that still tells items apart: the trailing question part (`…_q3` → `q3`, `query 2`
 * → as is), else the id cut to `max` characters keeping its end.
 */
export function shortRef(ref: string, max = 14): string {
  const q = /(?:^|[_\-\s.:/])((?:q|Q|query|item|criterion)[_\s-]?\d+[a-z]?)$/.exec(ref);
  if (q) return q[1]!;
  return ref.length <= max ? ref : `…${ref.slice(-(max - 1))}`;
}

/**
 * The label of an answer step: each answered item's short id and the start of its question, so a ✓/✗ is tied to
 * its question without opening the step (`q3 “What share of adults…”`; several items joined with " · ").
 * @param marks the items the step answered (`ref`, `question`); `max` characters of question text per item.
 * @returns the label, or '' without marks.
 */
export function answerStepLabel(marks: ReadonlyArray<{ ref: string; question: string }>, max = 60): string {
  return marks
    .map((m) => {
      const q = m.question.replace(/\s+/g, ' ').trim();
      const short = shortRef(m.ref);
      // a question that is only the id again ("query 1 (single_number)") adds nothing
      const text = q && !q.startsWith(m.ref) ? ` “${q.length > max ? `${q.slice(0, max - 1).trimEnd()}…` : q}”` : '';
      return `${short}${text}`;
    })
    .join(' · ');
}

/**
 * A path cut in the middle to at most `max` characters, keeping its file name whole (and the start of its folder):
 * `data/longda/NHANES/…/P_DEMO.pdf`. A file name longer than `max` keeps its end.
 */
export function middleTruncate(path: string, max: number): string {
  if (path.length <= max) return path;
  const slash = path.lastIndexOf('/');
  const name = path.slice(slash + 1);
  if (name.length + 2 >= max) return `…${name.slice(-(max - 1))}`;
  const head = path.slice(0, max - name.length - 2);
  return `${head}…/${name}`;
}

/** Below this many items an agreement statistic is shown with a warning (its CI spans most of its range). */
export const SMALL_SAMPLE = 10;

/**
 * The warning shown next to an agreement statistic on a small sample, or null when `n` ≥ {@link SMALL_SAMPLE}.
 * @param statistic its name as shown (κ, α, AC1); `n` the items it rests on.
 */
export function smallSampleWarning(statistic: string, n: number): string | null {
  if (n >= SMALL_SAMPLE) return null;
  return `${statistic} on n = ${n} is not informative: with fewer than ${SMALL_SAMPLE} items its confidence interval spans most of the possible range; judge more items before reading it.`;
}
