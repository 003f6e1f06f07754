// One perf gate line, the same in every part: goal / measured / baseline / ratio / PASS|FAIL. A FAIL sets the process's
// exit code to 1 so `npm run perf` fails (test/perf/run.mjs reports a non-zero exit per file).

/**
 * Prints one gate and records a FAIL in `process.exitCode`.
 * @param name what is measured (the scenario, in a user's words).
 * @param goal the goal as text (`≤ 10 ms median`).
 * @param measured the measured value as text, with its unit.
 * @param baseline what it is compared with in the same run, as text.
 * @param ratio measured / baseline (or measured / goal where the gate is absolute; say which in `baseline`).
 * @param ok whether the goal is met.
 */
export function verdict(
  name: string,
  goal: string,
  measured: string,
  baseline: string,
  ratio: number,
  ok: boolean,
): void {
  if (!ok) process.exitCode = 1;
  console.log(
    `${name}\n  goal ${goal} · measured ${measured} · baseline ${baseline} · ratio ${ratio.toFixed(2)} · ${ok ? 'PASS' : 'FAIL'}`,
  );
}
