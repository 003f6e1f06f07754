/**
 * `loupe blade gt` (show, versions, diff, save, export): BLADE ground truth versioned in the store (issue 17).
 * Version 0 is the dataset's shipped `annotations.csv`; `save` stores an edited file as the next version; `export`
 * writes any version back in BLADE's own format (same columns and JSON shapes).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { bladeGtStoreOf, diffGroundTruth, parseGtCsv, type BladeGtVersion } from '../core/benchmarks/blade/gt-versions.ts';
import { annotatorId } from '../core/util/annotator.ts';
import { LoupeInputError } from '../core/util/errors.ts';
import { openExistingStore, STORE_HELP, storeFile } from './store-arg.ts';
import { openStore } from '../core/store/run-store.ts';
import { UsageError, type CliCommand, type CliIo } from './types.ts';

const USAGE = `loupe blade gt <show|versions|diff|save|export> --root DATASETS_DIR --dataset NAME [${STORE_HELP}]
  show     [--version latest|N] [--json]   the specs of a version (0 = the shipped annotations.csv): conceptual
                                           variables, transforms with their dependencies, models; row problems
  versions [--json]                        every version: author, time, note, hash, what changed from its parent
  diff     --from N --to M                 specs added, removed, changed between two versions
  save     --file annotations.csv [--parent N] [--note TEXT] [--author NAME]
                                           stores an edited file as the next version (refused when a row cannot be
                                           used; the same content as its parent saves nothing)
  export   --version N --out FILE          writes a version as annotations.csv (BLADE's columns and JSON shapes)`;

interface Ctx { shippedFile: string; shipped: string; dataset: string }

function datasetOf(v: { root?: string | undefined; dataset?: string | undefined }, io: CliIo): Ctx {
  if (!v.root) throw new UsageError('--root DATASETS_DIR is required (the folder holding the BLADE datasets)');
  if (!v.dataset) throw new UsageError('--dataset NAME is required (affairs, hurricane, ...)');
  const shippedFile = join(resolve(io.cwd, v.root), v.dataset, 'annotations.csv');
  if (!existsSync(shippedFile)) throw new LoupeInputError(shippedFile, `no annotations.csv for dataset ${v.dataset} under ${v.root}`);
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
  if (group !== 'gt' || !sub || sub === '--help') throw new UsageError('give a subcommand: loupe blade gt show|versions|diff|save|export');
  const { values } = parseArgs({
    args: rest,
    options: {
      store: { type: 'string' }, root: { type: 'string' }, dataset: { type: 'string' }, version: { type: 'string' }, json: { type: 'boolean' }, from: { type: 'string' }, to: { type: 'string' },
      file: { type: 'string' }, parent: { type: 'string' }, note: { type: 'string' }, author: { type: 'string' }, out: { type: 'string' },
    },
  });
  const c = datasetOf(values, io);
  // save may create the store; the others read an existing one
  const rs = sub === 'save' ? openStore(storeFile(io, values.store)) : openExistingStore(io, values.store);
  try {
    const gts = bladeGtStoreOf(rs);
    const shippedVersion: BladeGtVersion = { dataset: c.dataset, version: 0, parent: 0, hash: '', csv: c.shipped, author: 'BLADE', createdAt: '', note: 'shipped annotations.csv' };
    const get = async (v: number | 'latest'): Promise<BladeGtVersion> => {
      if (v === 0) return shippedVersion;
      const x = v === 'latest' ? await gts.latest(c.dataset) : await gts.get(c.dataset, v);
      if (v === 'latest') return x ?? shippedVersion;
      if (!x) throw new LoupeInputError(`ground-truth version ${v}`, `dataset ${c.dataset} has ${(await gts.versions(c.dataset)).map((y) => y.version).join(', ') || 'only version 0 (the shipped file)'}`);
      return x;
    };
    switch (sub) {
      case 'show': {
        const v = await get(versionArg(values.version, '--version') ?? 'latest');
        const { annotations: a, problems } = parseGtCsv(v.csv, v.version ? `${c.dataset}/annotations.csv@v${v.version}` : c.shippedFile);
        if (values.json) {
          io.out(JSON.stringify({ dataset: c.dataset, version: v.version, conceptualVars: a.conceptualVars, transforms: a.transforms, models: a.models, problems }, null, 1) + '\n');
          return 0;
        }
        io.out(`${c.dataset} ground truth, version ${v.version}${v.version ? ` (${v.author}, ${v.createdAt.slice(0, 16)}${v.note ? `: ${v.note}` : ''})` : ' (shipped)'}\n`);
        io.out(`  ${a.conceptualVars.length} conceptual variables, ${a.transforms.length} transforms, ${a.models.length} models\n`);
        for (const x of a.conceptualVars) io.out(`  cvar ${x.specId}  ${x.effectiveType}  ${x.concept}  [${x.columnsOrig.join(', ')}]\n`);
        for (const x of a.transforms) io.out(`  transform ${x.specId}  ${x.verb || 'root'}  ${x.specName}${x.columnMappings.length ? `  ${x.columnMappings.map((m) => `${m.inputs.join('+')}→${m.output || 'table'}`).join('; ')}` : ''}\n`);
        for (const x of a.models) io.out(`  model ${x.specId}  ${x.specName}\n`);
        for (const p of problems) io.out(`  problem: ${p}\n`);
        return 0;
      }
      case 'versions': {
        const vs = await gts.versions(c.dataset);
        if (values.json) {
          io.out(JSON.stringify(vs.map(({ csv: _c, ...x }) => x), null, 1) + '\n');
          return 0;
        }
        io.out(`v0  shipped  ${c.shippedFile}\n`);
        for (const v of vs) {
          const d = diffGroundTruth(parseGtCsv((await get(v.parent)).csv, 'parent').annotations, parseGtCsv(v.csv, 'version').annotations);
          io.out(`v${v.version}  ${v.author}  ${v.createdAt.slice(0, 16)}  from v${v.parent}  ${v.hash.slice(0, 12)}  +${d.added.length} −${d.removed.length} ~${d.changed.length}${v.note ? `  ${v.note}` : ''}\n`);
        }
        return 0;
      }
      case 'diff': {
        const from = versionArg(values.from ?? '0', '--from')!;
        const to = versionArg(values.to ?? 'latest', '--to')!;
        const d = diffGroundTruth(parseGtCsv((await get(from)).csv, 'from').annotations, parseGtCsv((await get(to)).csv, 'to').annotations);
        if (values.json) io.out(JSON.stringify(d, null, 1) + '\n');
        else for (const [k, l] of Object.entries(d)) for (const id of l as string[]) io.out(`${k === 'added' ? '+' : k === 'removed' ? '−' : '~'} ${id}\n`);
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
        const v = await gts.save({ dataset: c.dataset, csv, author: values.author ?? annotatorId(io.env), ...(values.note ? { note: values.note } : {}), parent: parent === undefined || parent === 'latest' ? latest?.version ?? 0 : parent, shippedCsv: c.shipped });
        io.out(v.version === 0 || (latest && v.version === latest.version && v.hash === latest.hash) ? `same content as version ${v.version}: nothing saved\n` : `saved ${c.dataset} ground truth version ${v.version} (${v.hash.slice(0, 12)})\n`);
        return 0;
      }
      case 'export': {
        if (!values.out) throw new UsageError('--out FILE is required');
        const v = await get(versionArg(values.version ?? 'latest', '--version')!);
        const out = resolve(io.cwd, values.out);
        writeFileSync(out, v.csv);
        io.out(`wrote ${out}: ${c.dataset} ground truth version ${v.version}\n`);
        return 0;
      }
      default:
        throw new UsageError(`unknown subcommand '${sub}' (show, versions, diff, save, export)`);
    }
  } finally {
    await rs.close();
  }
}

export const bladeCommand: CliCommand = {
  name: 'blade',
  summary: 'BLADE ground truth versioned in the store: show, versions, diff, save an edited annotations.csv, export',
  usage: USAGE,
  run: gt,
};
