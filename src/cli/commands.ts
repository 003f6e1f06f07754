/** The table of `loupe` subcommands. Add new subcommands here (one file each under src/cli/). */
import { agreementCommand, annotationsCommand } from './annotations.ts';
import { bladeCommand } from './blade-gt.ts';
import { blocksCommand } from './blocks.ts';
import { checklistCommand } from './checklist.ts';
import { compareCommand } from './compare.ts';
import { demoCommand } from './demo.ts';
import { doctorCommand } from './doctor.ts';
import { failuresCommand } from './failures.ts';
import { exportCommand } from './export.ts';
import { fetchCommand } from './fetch.ts';
import { importCommand } from './import.ts';
import { indexCommand } from './index-cmd.ts';
import { interveneCommand } from './intervene.ts';
import { k8sJobCommand } from './k8s-job.ts';
import { mcpCommand } from './mcp.ts';
import { powerCommand } from './power.ts';
import { reportCommand } from './report.ts';
import { resultsCommand } from './results.ts';
import { reviewCommand } from './review.ts';
import { runCommand } from './run.ts';
import { runsCommand } from './runs.ts';
import { scoreCommand } from './score.ts';
import { searchCommand } from './search.ts';
import { storeCommand } from './store.ts';
import { variablesCommand } from './variables.ts';
import { workerCommand } from './worker.ts';
import { searchEvalCommand } from './search-eval.ts';
import { initBenchmarkCommand } from './init-benchmark.ts';
import type { CliCommand } from './types.ts';

export const commands: CliCommand[] = [
  doctorCommand,
  indexCommand,
  searchCommand,
  variablesCommand,
  searchEvalCommand,
  runCommand,
  runsCommand,
  demoCommand,
  scoreCommand,
  compareCommand,
  powerCommand,
  reportCommand,
  resultsCommand,
  blocksCommand,
  fetchCommand,
  annotationsCommand,
  agreementCommand,
  checklistCommand,
  reviewCommand,
  bladeCommand,
  interveneCommand,
  failuresCommand,
  mcpCommand,
  storeCommand,
  workerCommand,
  k8sJobCommand,
  initBenchmarkCommand,
  importCommand,
  exportCommand,
];
