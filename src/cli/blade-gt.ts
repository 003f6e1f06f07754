/**
 * `loupe blade gt` (show, versions, diff, save, export): BLADE ground truth versioned in the store (issue 17).
 * Version 0 is the dataset's shipped `annotations.csv`; `save` stores an edited file as the next version; `export`
 * writes any version back in BLADE's own format (same columns and JSON shapes).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  bladeGtStoreOf,
  diffGroundTruth,
  parseGtCsv,
  type BladeGtVersion,
} from '../core/benchmarks/blade/gt-versions.ts';
import { annotationStoreOf } from '../core/annotations/index.ts';
import type { DecisionForm } from '../core/benchmarks/blade/authoring.ts';
import { BLADE_REVIEW_TASK, withReviewRows, type DecisionInput } from '../core/benchmarks/blade/decision-review.ts';
import { BladeDecisionWorkbench } from '../core/benchmarks/blade/decision-workbench.ts';
import { loadBlade } from '../core/benchmarks/blade/load.ts';
import { getBenchmark } from '../core/benchmarks/registry.ts';
import type { SandboxMode } from '../core/kernel/index.ts';
import type { Block } from '../core/suites/types.ts';
import { annotatorId } from '../core/util/annotator.ts';
import { LoupeInputError } from '../core/util/errors.ts';
import { openExistingStore, STORE_OPTIONS, storeLocation } from './store-arg.ts';
import { openStoreAt } from '../core/store/open.ts';
import { UsageError, type CliIo } from './types.ts';
import { JSON_OPTIONS } from './option-groups.ts';
import { declareCommand, defineCommand, optionGroup, parseCommand } from './options.ts';

const DATASET = optionGroup('dataset', {
  root: { type: 'string', value: 'DATASETS_DIR', help: 'the folder holding the BLADE datasets (required)' },
  dataset: { type: 'string', value: 'NAME', help: 'the dataset (required: affairs, hurricane, ...)' },
});

const GT = declareCommand({
  synopsis: 'blade gt <show|versions|diff|save|export|check|author>',
  groups: [
    DATASET,
    optionGroup('ground truth', {
      version: {
        type: 'string',
        value: 'latest|N',
        help: 'show / export: the version (0 = the shipped annotations.csv)',
      },
      from: { type: 'string', value: 'N', help: 'diff: the older version' },
      to: { type: 'string', value: 'M', help: 'diff: the newer version' },
      file: {
        type: 'string',
        value: 'FILE',
        help: 'save: an edited annotations.csv; check / author: a spec form FORM.json',
      },
      parent: { type: 'string', value: 'N', help: 'save: the version edited' },
      note: { type: 'string', value: 'TEXT', help: 'save / author: a note with the version' },
      author: {
        type: 'string',
        value: 'NAME',
        help: 'save / author: who (default $LOUPE_ANNOTATOR, else git user.name, else the OS user)',
      },
      out: { type: 'string', value: 'FILE', help: 'export: where annotations.csv is written' },
      'with-reviews': {
        type: 'boolean',
        help: "export: append the review rows of this dataset's decisions to annotate_cvar_spec_json / annotate_transform_spec_json",
      },
      sandbox: {
        type: 'string',
        value: 'bubblewrap|off',
        help: "check / author: where the form's checks run (default bubblewrap)",
      },
    }),
    STORE_OPTIONS,
    JSON_OPTIONS,
  ],
  notes: `  show      the specs of a version: conceptual variables, transforms with their dependencies, models; row problems
  versions  every version: author, time, note, hash, what changed from its parent
  diff      specs added, removed, changed between two versions
  save      stores an edited file as the next version (refused when a row cannot be used; the same content as its
            parent saves nothing)
  export    writes a version as annotations.csv (BLADE's columns and JSON shapes)
  check     runs the checks of a spec form (kind transform | cvar | model, BLADE's fields) on data.csv in the sandboxed
            kernel; exit 1 when it fails
  author    checks the form and, when it passes, saves it as the next version`,
});

const REVIEW_AGREEMENT = declareCommand({
  synopsis: 'blade review agreement',
  groups: [
    DATASET,
    optionGroup('agreement', {
      rule: {
        type: 'string',
        value: 'all-yes|majority',
        help: 'when a decision counts as justifiable (default all-yes)',
      },
    }),
    STORE_OPTIONS,
    JSON_OPTIONS,
  ],
  notes:
    '  agreement per decision type (expert vs agent decisions) and the decisions offered for acceptance by consensus',
});

interface Ctx {
  shippedFile: string;
  shipped: string;
  dataset: string;
}

function datasetOf(v: { root?: string | undefined; dataset?: string | undefined }, io: CliIo): Ctx {
  if (!v.root) throw new UsageError('--root DATASETS_DIR is required (the folder holding the BLADE datasets)');
  if (!v.dataset) throw new UsageError('--dataset NAME is required (affairs, hurricane, ...)');
  const shippedFile = join(resolve(io.cwd, v.root), v.dataset, 'annotations.csv');
  if (!existsSync(shippedFile)) {
    throw new LoupeInputError(shippedFile, `no annotations.csv for dataset ${v.dataset} under ${v.root}`);
  }
  return { shippedFile, shipped: readFileSync(shippedFile, 'utf8'), dataset: v.dataset };
}

const versionArg = (s: string | undefined, flag: string): number | 'latest' | undefined => {
  if (s === undefined) return undefined;
  if (s === 'latest') return 'latest';
  if (s === 'shipped' || /^\d+$/.test(s)) return s === 'shipped' ? 0 : Number(s);
  throw new UsageError(`${flag} must be latest, shipped or a version number, got '${s}'`);
};

async function gt(argv: string[], io: CliIo): Promise<number> {
  const [group, sub, ...rest] = argv;
  if (group === 'review') return review(sub, rest, io);
  if (group !== 'gt' || !sub || sub === '--help') {
    throw new UsageError(
      'give a subcommand: loupe blade gt show|versions|diff|save|export|check|author, or loupe blade review agreement',
    );
  }
  const { values } = parseCommand(GT, rest);
  const c = datasetOf(values, io);
  if (sub === 'check' || sub === 'author') return author(sub, values, c, io);
  // save may create the store; the others read an existing one
  const rs =
    sub === 'save'
      ? await openStoreAt(storeLocation(io, values.store), { env: io.env })
      : await openExistingStore(io, values.store);
  try {
    const gts = bladeGtStoreOf(rs);
    const shippedVersion: BladeGtVersion = {
      dataset: c.dataset,
      version: 0,
      parent: 0,
      hash: '',
      csv: c.shipped,
      author: 'BLADE',
      createdAt: '',
      note: 'shipped annotations.csv',
    };
    const get = async (v: number | 'latest'): Promise<BladeGtVersion> => {
      if (v === 0) return shippedVersion;
      const x = v === 'latest' ? await gts.latest(c.dataset) : await gts.get(c.dataset, v);
      if (v === 'latest') return x ?? shippedVersion;
      if (!x) {
        throw new LoupeInputError(
          `ground-truth version ${v}`,
          `dataset ${c.dataset} has ${(await gts.versions(c.dataset)).map((y) => y.version).join(', ') || 'only version 0 (the shipped file)'}`,
        );
      }
      return x;
    };
    switch (sub) {
      case 'show': {
        const v = await get(versionArg(values.version, '--version') ?? 'latest');
        const { annotations: a, problems } = parseGtCsv(
          v.csv,
          v.version ? `${c.dataset}/annotations.csv@v${v.version}` : c.shippedFile,
        );
        if (values.json) {
          io.out(
            JSON.stringify(
              {
                dataset: c.dataset,
                version: v.version,
                conceptualVars: a.conceptualVars,
                transforms: a.transforms,
                models: a.models,
                problems,
              },
              null,
              1,
            ) + '\n',
          );
          return 0;
        }
        io.out(
          `${c.dataset} ground truth, version ${v.version}${v.version ? ` (${v.author}, ${v.createdAt.slice(0, 16)}${v.note ? `: ${v.note}` : ''})` : ' (shipped)'}\n`,
        );
        io.out(
          `  ${a.conceptualVars.length} conceptual variables, ${a.transforms.length} transforms, ${a.models.length} models\n`,
        );
        for (const x of a.conceptualVars) {
          io.out(`  cvar ${x.specId}  ${x.effectiveType}  ${x.concept}  [${x.columnsOrig.join(', ')}]\n`);
        }
        for (const x of a.transforms) {
          io.out(
            `  transform ${x.specId}  ${x.verb || 'root'}  ${x.specName}${x.columnMappings.length ? `  ${x.columnMappings.map((m) => `${m.inputs.join('+')}→${m.output || 'table'}`).join('; ')}` : ''}\n`,
          );
        }
        for (const x of a.models) io.out(`  model ${x.specId}  ${x.specName}\n`);
        for (const p of problems) io.out(`  problem: ${p}\n`);
        return 0;
      }
      case 'versions': {
        const vs = await gts.versions(c.dataset);
        if (values.json) {
          io.out(
            JSON.stringify(
              vs.map(({ csv: _c, ...x }) => x),
              null,
              1,
            ) + '\n',
          );
          return 0;
        }
        io.out(`v0  shipped  ${c.shippedFile}\n`);
        for (const v of vs) {
          const d = diffGroundTruth(
            parseGtCsv((await get(v.parent)).csv, 'parent').annotations,
            parseGtCsv(v.csv, 'version').annotations,
          );
          io.out(
            `v${v.version}  ${v.author}  ${v.createdAt.slice(0, 16)}  from v${v.parent}  ${v.hash.slice(0, 12)}  +${d.added.length} −${d.removed.length} ~${d.changed.length}${v.note ? `  ${v.note}` : ''}\n`,
          );
        }
        return 0;
      }
      case 'diff': {
        const from = versionArg(values.from ?? '0', '--from')!;
        const to = versionArg(values.to ?? 'latest', '--to')!;
        const d = diffGroundTruth(
          parseGtCsv((await get(from)).csv, 'from').annotations,
          parseGtCsv((await get(to)).csv, 'to').annotations,
        );
        if (values.json) io.out(JSON.stringify(d, null, 1) + '\n');
        else {
          for (const [k, l] of Object.entries(d)) {
            for (const id of l as string[]) io.out(`${k === 'added' ? '+' : k === 'removed' ? '−' : '~'} ${id}\n`);
          }
        }
        return 0;
      }
      case 'save': {
        if (!values.file) throw new UsageError('--file annotations.csv is required');
        const file = resolve(io.cwd, values.file);
        let csv: string;
        try {
          csv = readFileSync(file, 'utf8');
        } catch (e) {
          throw new LoupeInputError(file, `cannot read: ${(e as Error).message}`);
        }
        const latest = await gts.latest(c.dataset);
        const parent = versionArg(values.parent, '--parent');
        const v = await gts.save({
          dataset: c.dataset,
          csv,
          author: values.author ?? annotatorId(io.env),
          ...(values.note ? { note: values.note } : {}),
          parent: parent === undefined || parent === 'latest' ? (latest?.version ?? 0) : parent,
          shippedCsv: c.shipped,
        });
        io.out(
          v.version === 0 || (latest && v.version === latest.version && v.hash === latest.hash)
            ? `same content as version ${v.version}: nothing saved\n`
            : `saved ${c.dataset} ground truth version ${v.version} (${v.hash.slice(0, 12)})\n`,
        );
        return 0;
      }
      case 'export': {
        if (!values.out) throw new UsageError('--out FILE is required');
        const v = await get(versionArg(values.version ?? 'latest', '--version')!);
        const out = resolve(io.cwd, values.out);
        let csv = v.csv;
        let n = 0;
        if (values['with-reviews']) {
          const ann = annotationStoreOf(rs);
          const items = (await ann.listItems({ task: BLADE_REVIEW_TASK })).filter(
            (i) => (i.input as DecisionInput).dataset === c.dataset,
          );
          const byItem = await ann.annotationsByItem({ task: BLADE_REVIEW_TASK });
          const reviewed = items
            .filter((i) => byItem.has(i.id))
            .map((i) => ({ item: i, annotations: byItem.get(i.id)! }));
          csv = withReviewRows(csv, reviewed);
          n = reviewed.length;
        }
        writeFileSync(out, csv);
        io.out(
          `wrote ${out}: ${c.dataset} ground truth version ${v.version}${values['with-reviews'] ? ` with the review rows of ${n} reviewed decision${n === 1 ? '' : 's'}` : ''}\n`,
        );
        return 0;
      }
      default:
        throw new UsageError(`unknown subcommand '${sub}' (show, versions, diff, save, export)`);
    }
  } finally {
    await rs.close();
  }
}

/** The BLADE block of a dataset (for the checks: data.csv, the shipped ground truth). */
function blockOf(root: string, dataset: string, io: CliIo): Block {
  const suite = loadBlade(resolve(io.cwd, root));
  const def = getBenchmark(suite.kind);
  const block = suite.blocks.find((b) => b.id === dataset || (def.blockSummary?.(b).names ?? []).includes(dataset));
  if (!block) throw new LoupeInputError(`dataset ${dataset}`, `is not a BLADE dataset under ${root}`);
  return block;
}

const sandboxArg = (s: string | undefined): SandboxMode | undefined => {
  if (s === undefined) return undefined;
  if (s !== 'bubblewrap' && s !== 'off') throw new UsageError(`--sandbox must be bubblewrap or off, got '${s}'`);
  return s;
};

/** `check` / `author`: a spec form (JSON) checked on data.csv; `author` saves it when the check passes. */
async function author(
  sub: 'check' | 'author',
  values: {
    root?: string | undefined;
    dataset?: string | undefined;
    file?: string | undefined;
    note?: string | undefined;
    author?: string | undefined;
    store?: string | undefined;
    sandbox?: string | undefined;
    json?: boolean | undefined;
  },
  c: Ctx,
  io: CliIo,
): Promise<number> {
  if (!values.file) {
    throw new UsageError(
      '--file FORM.json is required (a spec form: {"kind": "transform", "specName": ..., "code": ..., "mapping": [...], "branches": [...]})',
    );
  }
  const file = resolve(io.cwd, values.file);
  let form: DecisionForm;
  try {
    form = JSON.parse(readFileSync(file, 'utf8')) as DecisionForm;
  } catch (e) {
    throw new LoupeInputError(file, `is not a JSON spec form: ${(e as Error).message}`);
  }
  if (!form || !['transform', 'cvar', 'model'].includes(form.kind)) {
    throw new LoupeInputError(file, 'kind must be transform, cvar or model');
  }
  const rs = await openStoreAt(storeLocation(io, values.store), { env: io.env });
  const sandbox = sandboxArg(values.sandbox);
  const wb = new BladeDecisionWorkbench(rs, blockOf(values.root!, c.dataset, io), sandbox ? { sandbox } : {});
  try {
    const check = await wb.check(form);
    if (values.json) io.out(JSON.stringify(check, null, 1) + '\n');
    else {
      io.out(
        `${check.ok ? 'check passed' : 'check FAILED'} (${check.durationMs} ms) on ${c.dataset}/data.csv: ${check.data.rows} rows, ${check.data.columns.length} columns\n`,
      );
      for (const b of check.branches) {
        io.out(
          `  ${form.kind === 'transform' ? `branch ${b.branch + 1} (after ${b.dependencies.join(' + ')})` : 'table'}: ${b.error ? `error: ${b.error}` : `${b.rows} rows; columns ${b.columns?.join(', ')}${b.added?.length ? `; added ${b.added.join(', ')}` : ''}`}\n`,
        );
      }
      if (check.model) {
        io.out(
          `  model: ${check.model.ok ? `${check.model.type}, ${check.model.nobs} observations` : `error: ${check.model.error}`}\n`,
        );
      }
      for (const p of check.problems) io.out(`  problem: ${p.field}: ${p.message}\n`);
    }
    if (!check.ok) return 1;
    if (sub === 'author') {
      const { version, specId } = await wb.save(form, check, values.author ?? annotatorId(io.env), values.note ?? '');
      io.out(`saved ${c.dataset} ground truth version ${version.version} with spec ${specId}\n`);
    }
    return 0;
  } finally {
    await wb.close();
    await rs.close();
  }
}

/** `loupe blade review agreement`. */
async function review(sub: string | undefined, rest: string[], io: CliIo): Promise<number> {
  if (sub !== 'agreement') throw new UsageError('give a subcommand: loupe blade review agreement');
  const { values } = parseCommand(REVIEW_AGREEMENT, rest);
  const c = datasetOf(values, io);
  const rule = values.rule ?? 'all-yes';
  if (rule !== 'all-yes' && rule !== 'majority') {
    throw new UsageError(`--rule must be all-yes or majority, got '${rule}'`);
  }
  const rs = await openExistingStore(io, values.store);
  const wb = new BladeDecisionWorkbench(rs, blockOf(values.root!, c.dataset, io));
  try {
    const a = await wb.agreement({ kind: rule, minAnnotators: 2 });
    if (values.json) {
      io.out(JSON.stringify(a, null, 1) + '\n');
      return 0;
    }
    const pct = (x: number | null) => (x === null ? '—' : `${Math.round(x * 100)}%`);
    io.out(`${c.dataset}: decisions judged justifiable (rule ${rule}), among decisions with ≥ 2 verdicts\n`);
    const who = (names: readonly string[]) => names.map((n) => a.labels[n] ?? n).join(', ') || '—';
    for (const r of a.rows) {
      io.out(
        `  ${r.type.padEnd(9)} ${r.source.padEnd(6)} n=${String(r.pairable).padEnd(4)} justifiable ${pct(r.justifiable).padEnd(5)} same judgement ${pct(r.percentAgreement).padEnd(5)} κ ${r.cohensKappa?.toFixed(2) ?? '—'}  α ${r.alpha?.toFixed(2) ?? '—'}  annotators ${who(r.annotators)}\n`,
      );
    }
    io.out(`offered for acceptance: ${a.candidates.filter((x) => x.acceptedIn === null).length}\n`);
    for (const x of a.candidates) {
      io.out(
        `  ${x.itemId}  ${x.type}  ${x.summary}  (by ${who(x.annotators)})${x.acceptedIn !== null ? `  (accepted in v${x.acceptedIn})` : ''}\n`,
      );
    }
    return 0;
  } finally {
    await wb.close();
    await rs.close();
  }
}

export const bladeCommand = defineCommand({
  name: 'blade',
  summary:
    'BLADE ground truth versioned in the store: show, versions, diff, save an edited annotations.csv, export (with review rows), check / author a spec form; review agreement',
  declarations: [GT, REVIEW_AGREEMENT],
  run: gt,
});
