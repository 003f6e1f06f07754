/**
 * Issue 26 "Identity" wherever annotators are listed: BLADE decision review and agreement, failure-tag agreement and
 * tags, side-by-side votes and the Bradley–Terry ranking name each annotator with the database role that wrote their
 * annotations ("Ana (role ana_pg)", `annotatorLabel`), in the core's view data and in the CLI. PostgreSQL: two login
 * roles of their own write; SQLite: no roles, the bare names.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { annotationStoreOf } from '../../../../src/core/annotations/index.ts';
import {
  decisionVerdict,
  ensureExpertDecisionItems,
  ensureRunDecisionItems,
  reviewQueueSpec,
  type DecisionInput,
} from '../../../../src/core/benchmarks/blade/decision-review.ts';
import { BladeDecisionWorkbench } from '../../../../src/core/benchmarks/blade/decision-workbench.ts';
import { parseGtCsv } from '../../../../src/core/benchmarks/blade/gt-versions.ts';
import { loadBlade } from '../../../../src/core/benchmarks/blade/load.ts';
import { failureTagAgreement, tagSteps } from '../../../../src/core/failures/index.ts';
import { builtinTaxonomies, findTaxonomy } from '../../../../src/app/failures/registry.ts';
import { pairwiseRanking } from '../../../../src/core/review/pairwise.ts';
import { reviewQueueView } from '../../../../src/app/review/review.ts';
import type { RunRecord } from '../../../../src/core/store/records.ts';
import type { RunStore } from '../../../../src/core/store/types.ts';
import { main } from '../../../../src/cli/main.ts';
import { seedFailureFixture } from '../../../helpers/failure-fixtures.ts';
import { sharedData } from '../../../helpers/shared.ts';
import { forEachEngine } from '../../../helpers/store-engines.ts';

const DATASETS = sharedData('blade', 'datasets');
const gt = parseGtCsv(readFileSync(join(DATASETS, 'hurricane', 'annotations.csv'), 'utf8'), 'hurricane').annotations;
const COLS = readFileSync(join(DATASETS, 'hurricane', 'data.csv'), 'utf8')
  .split('\n', 1)[0]!
  .split(',')
  .map((c) => c.replace(/"/g, '').trim());
const ANALYSIS = {
  cvars: {
    ivs: [{ description: 'femininity of the name', columns: ['masfem'] }],
    dv: { description: 'deaths', columns: ['alldeaths'] },
    controls: [],
  },
  transform_code: '',
  m_code: '',
};

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-roles-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  return main(argv, {
    out: (s: string) => {
      out += s;
    },
    err: (s: string) => {
      err += s;
    },
    env: { ...process.env },
    cwd: process.cwd(),
  } as never).then((code) => ({ code: code as number, out, err }));
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

forEachEngine((e) => {
  it(
    'BLADE decisions, failure tags and pairwise votes list each annotator with the database role that wrote them (views and CLI)',
    { timeout: 180_000 },
    async () => {
      const loc = await e.fresh();
      const owner = await e.open(loc);
      const ws = join(dir, e.name);
      const runIds = await seedFailureFixture(owner, ws);
      const ann = annotationStoreOf(owner);
      // BLADE review items: the ground truth's decisions and one run's (its conceptual variables)
      await ensureExpertDecisionItems(
        ann,
        { dataset: 'hurricane', researchQuestion: 'rq', dataColumns: COLS },
        gt,
        0,
        'blade',
      );
      const bladeRun = {
        id: 'blade-r1',
        suite: 'blade',
        blockId: 'hurricane',
        dataChecksums: {},
      } as unknown as RunRecord;
      const extra = {
        getExtraState: async () => ({ blade: { submissions: [], final: ANALYSIS } }),
      } as unknown as RunStore;
      const { items: agentItems } = await ensureRunDecisionItems(
        ann,
        [bladeRun],
        extra,
        async () => ({
          dataset: 'hurricane',
          dataPath: join(DATASETS, 'hurricane', 'data.csv'),
          researchQuestion: 'rq',
          dataColumns: COLS,
        }),
        async () => ({ status: 'empty', units: [] }),
      );
      const q = await ann.openQueue(
        reviewQueueSpec({
          runIds: ['blade-r1'],
          perDataset: 100,
          seed: 0,
          includeExpert: true,
          datasets: ['hurricane'],
        }),
        { reviewers: 2, blind: true },
      );
      // two annotators, each logged in as their own role on PostgreSQL
      const srv = e.server();
      const db = srv ? new URL(loc).pathname.slice(1) : '';
      const tag = `${process.pid}_${Date.now() % 100000}`;
      const [anaLoc, boLoc] = srv
        ? [await srv.createRole(`ana_pg_${tag}`, db), await srv.createRole(`bo_pg_${tag}`, db)]
        : [loc, loc];
      const ana = srv ? `Ana (role ana_pg_${tag})` : 'Ana';
      const bo = srv ? `Bo (role bo_pg_${tag})` : 'Bo';
      const roles = srv ? { Ana: [`ana_pg_${tag}`], Bo: [`bo_pg_${tag}`] } : { Ana: [], Bo: [] };
      const anaStore = await e.open(anaLoc);
      const boStore = await e.open(boLoc);
      try {
        const cvars = (await ann.listItems({ task: 'blade-decision-review' })).filter(
          (i) =>
            (i.input as DecisionInput).decision.type === 'cvar' && (i.input as DecisionInput).dataset === 'hurricane',
        );
        assert.ok(agentItems.length >= 2 && cvars.some((i) => (i.input as DecisionInput).source === 'expert'));
        for (const [s, who] of [
          [anaStore, 'Ana'],
          [boStore, 'Bo'],
        ] as const) {
          for (const i of cvars) {
            await annotationStoreOf(s).annotate({
              itemId: i.id,
              annotator: who,
              verdict: decisionVerdict('cvar', { is_reasonable: 'Yes', can_derive_from_data: 'Yes' }, `${who} agrees`),
              queueId: q.id,
              origin: 'panel',
            });
          }
        }
        const block = loadBlade(DATASETS).blocks.find((b) => b.id === 'hurricane' || b.blade?.dataset === 'hurricane')!;
        const wb = new BladeDecisionWorkbench(owner, block);
        try {
          const a = await wb.agreement();
          for (const source of ['agent', 'expert'] as const) {
            const row = a.rows.find((r) => r.type === 'cvar' && r.source === source)!;
            assert.deepEqual([row.annotators, row.roles], [['Ana', 'Bo'], roles], source);
          }
          assert.deepEqual(a.labels, { Ana: ana, Bo: bo });
          assert.ok(a.candidates.length >= 2 && a.candidates.every((c) => c.annotators.join() === 'Ana,Bo'));
          const rv = await wb.reviewView(q.id, 'Ana', { pos: 0 });
          assert.deepEqual(
            [rv.byAnnotator, rv.labels],
            [
              { Ana: cvars.length, Bo: cvars.length },
              { Ana: ana, Bo: bo },
            ],
          );
        } finally {
          await wb.close();
        }
        const bladeOut = await cli([
          'blade',
          'review',
          'agreement',
          '--store',
          loc,
          '--root',
          DATASETS,
          '--dataset',
          'hurricane',
        ]);
        assert.equal(bladeOut.code, 0, bladeOut.err);
        assert.match(bladeOut.out, new RegExp(`cvar +agent .*annotators ${esc(ana)}, ${esc(bo)}\\n`));
        assert.match(bladeOut.out, new RegExp(`cvar +expert .*annotators ${esc(ana)}, ${esc(bo)}\\n`));
        assert.match(bladeOut.out, new RegExp(`bd:[0-9a-f]{16}  cvar  .*\\(by ${esc(ana)}, ${esc(bo)}\\)\\n`));

        // failure tags: Ana from the CLI, Bo from the core, on steps of one run
        const ddr = findTaxonomy(builtinTaxonomies(), 'ddr');
        const tagOut = await cli([
          'failures',
          'tag',
          '--store',
          anaLoc,
          '--run',
          runIds[0]!,
          '--steps',
          '1-2',
          '--taxonomy',
          'ddr',
          '--classes',
          'over-reasoning',
          '--annotator',
          'Ana',
        ]);
        assert.equal(tagOut.code, 0, tagOut.err);
        assert.match(
          tagOut.out,
          new RegExp(`^tagged steps 1–2 of run ${runIds[0]} \\(item ft:[^)]+\\) by ${esc(ana)}\\n$`),
        );
        await tagSteps(annotationStoreOf(boStore), boStore, {
          runId: runIds[0]!,
          from: 1,
          to: 1,
          taxonomy: ddr,
          classes: ['over-reasoning'],
          severity: 'major',
          annotator: 'Bo',
        });
        const fa = await failureTagAgreement(ann, owner, ddr);
        assert.deepEqual([fa.steps.annotators, fa.steps.roles], [['Ana', 'Bo'], roles]);
        const faOut = await cli(['failures', 'agreement', '--store', loc, '--taxonomy', 'ddr']);
        assert.equal(faOut.code, 0, faOut.err);
        assert.match(
          faOut.out,
          new RegExp(`Trajectories \\(units = steps\\): 1 documents, 6 units, annotators ${esc(ana)}, ${esc(bo)}\\n`),
        );

        // side-by-side: a pair of two models' runs of one block, one vote each
        const pair = [
          runIds.find((r) => r === 'ddr-model-a-mimic-e1')!,
          runIds.find((r) => r === 'ddr-model-b-mimic-e1')!,
        ];
        const pairsOut = await cli([
          'review',
          'pairs',
          '--store',
          loc,
          '--run',
          pair[0]!,
          '--run',
          pair[1]!,
          '--criteria',
          'Correctness',
          '--reviewers',
          '2',
          '--json',
        ]);
        assert.equal(pairsOut.code, 0, pairsOut.err);
        const opened = JSON.parse(pairsOut.out) as { queue: { id: string }; pairs: Array<{ id: string }> };
        for (const [l, who, choice, label] of [
          [anaLoc, 'Ana', 'A', ana],
          [boLoc, 'Bo', 'B', bo],
        ] as const) {
          const v = await cli([
            'review',
            'vote',
            '--store',
            l,
            '--pair',
            opened.pairs[0]!.id,
            '--overall',
            choice,
            '--criterion',
            `Correctness=${choice}`,
            '--annotator',
            who,
          ]);
          assert.equal(v.code, 0, v.err);
          assert.match(v.out, new RegExp(`^recorded \\S+ by ${esc(label)}: overall ${choice}\\n$`));
        }
        const r = await pairwiseRanking(ann, owner, { samples: 20 });
        assert.deepEqual(r.reviewers, [
          { annotator: 'Ana', roles: roles.Ana, label: ana, votes: 1 },
          { annotator: 'Bo', roles: roles.Bo, label: bo, votes: 1 },
        ]);
        const rankOut = await cli(['review', 'rank', '--store', loc, '--samples', '20']);
        assert.equal(rankOut.code, 0, rankOut.err);
        assert.match(rankOut.out, new RegExp(`\\nreviewers: ${esc(ana)} 1 vote\\(s\\), ${esc(bo)} 1 vote\\(s\\)\\n`));
        const pq = (await ann.getQueue(opened.queue.id))!;
        assert.deepEqual((await reviewQueueView(ann, pq, 'Ana')).byReviewer, [
          { label: ana, voted: 1 },
          { label: bo, voted: 1 },
        ]);
      } finally {
        await anaStore.close();
        await boStore.close();
        await owner.close();
      }
    },
  );
});
