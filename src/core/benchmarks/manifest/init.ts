/**
 * `loupe init-benchmark`: a commented `loupe-benchmark.yaml` drafted from a sample item file, with the fields guessed
 * from its first row (id, instruction, answer, constraints, format, metadata) and every other manifest field shown
 * commented out with its meaning. The draft is validated before it is returned. Source: issue 44.
 */
import { basename, relative, sep } from 'node:path';
import { readRows } from './load.ts';
import { parseManifest } from './manifest.ts';
import { LoupeInputError } from '../../util/errors.ts';

const pick = (fields: string[], names: string[]): string | undefined =>
  names.map((n) => fields.find((f) => f.toLowerCase() === n)).find((x) => x !== undefined);

/**
 * Drafts a manifest for the items in `sample`.
 * @param dir the benchmark folder (paths in the manifest are relative to it); `sample` a .jsonl/.json/.csv file in it.
 * @returns the YAML text (valid against the schema).
 * @throws LoupeInputError naming the sample when it has no rows or no field that can be the id or instruction.
 */
export function draftManifest(dir: string, sample: string): string {
  const rows = readRows(sample);
  if (!rows.length) throw new LoupeInputError(sample, 'has no rows to draft a manifest from');
  const fields = Object.keys(rows[0]!.row);
  const id = pick(fields, ['id', 'qid', 'question_id', 'task_id', 'uid', 'instance_id', 'name']);
  const instruction = pick(fields, ['question', 'instruction', 'prompt', 'task', 'query', 'problem', 'input']);
  if (!id || !instruction) {
    throw new LoupeInputError(
      sample,
      `cannot tell which field is the ${!id ? 'item id' : 'instruction'} (fields: ${fields.join(', ')}); write the manifest by hand (see the README, "Benchmark manifest")`,
    );
  }
  const answer = pick(fields, [
    'answer',
    'answers',
    'gold',
    'label',
    'labels',
    'expected',
    'target',
    'solution',
    'common_answers',
  ]);
  const constraints = pick(fields, ['constraints', 'constraint', 'requirements']);
  const format = pick(fields, ['format', 'answer_format', 'output_format']);
  const file = pick(fields, ['file_name', 'file', 'data_file', 'table', 'dataset', 'csv']);
  const used = new Set([id, instruction, answer, constraints, format].filter(Boolean));
  const metadata = fields.filter((f) => !used.has(f));
  const rel = relative(dir, sample).split(sep).join('/');
  const kind =
    basename(dir)
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^[^a-z]+/, '')
      .slice(0, 40) || 'my-benchmark';
  const lines = [
    `# Loupe benchmark manifest drafted from ${rel} by loupe init-benchmark. Check every line; the README's`,
    '# "Benchmark manifest" section documents each field. Paths are relative to this folder (the suite root).',
    `kind: ${kind}                     # the --suite name: lower case letters, digits, -`,
    `title: ${JSON.stringify(basename(dir))}`,
    '# description: one line on what the agent does and how it is scored',
    '# version: the upstream commit or release of the data',
    '# upstream: https://…',
    'clusterUnit: block               # what one block is (dataset, table file, task): the cluster of clustered SEs',
    '',
    'items:',
    `  file: ${rel}`,
    `  id: ${id}`,
    `  instruction: ${instruction}`,
    constraints ? `  constraints: ${constraints}` : '  # constraints: a field with constraints shown to the agent',
    format ? `  answerFormat: ${format}` : '  # answerFormat: a field with the answer format shown to the agent',
    metadata.length
      ? `  metadata: [${metadata.join(', ')}]`
      : '  # metadata: [level, domain]   fields kept for by-field aggregations',
    '',
    file
      ? `blocks:\n  by: ${file}                 # one block per value of this field\n  # title: 'Questions on {value}'`
      : '# blocks:\n#   by: a field grouping items into blocks (default: one block per item)',
    '',
    file
      ? `data:\n  dir: .                       # folder of the data files (relative to this folder)\n  field: ${file}             # each item's data file, copied to data/ in the workspace`
      : "# data:\n#   dir: data                  # folder of the data files\n#   field: a field naming each item's file(s), or\n#   files: ['*.csv']             # globs of files every block sees",
    "# docs:\n#   files: ['docs/**/*.pdf']     # documentation every block sees",
    '',
    'gold:                            # never shown to the agent',
    `  file: ${rel}                    # may be another file with the same ids`,
    `  id: ${id}`,
    `  answer: ${answer ?? 'answer'}${answer ? '' : '                 # FIXME: no answer field was found in the sample'}`,
    '  shape: value                   # value | pairs ([[name, value], ...]) | object ({name: value})',
    '',
    'tools: [python, answer]          # python: the sandboxed kernel; answer: records the response text',
    '',
    'scoring:',
    '  scorer: exact                  # exact | numeric-tolerance | list | regex-extract',
    '  strip: true',
    '  # caseSensitive: false',
    '  # absolute: 0.01               # numeric-tolerance (and compare: numeric-tolerance)',
    '  # relative: 0.05',
    "  # pattern: '@(\\w+)\\[(.*?)\\]'    # regex-extract: groups name and value",
    '  # compare: numeric-tolerance   # regex-extract / list: how one value is compared',
    '  # round: 4                     # metrics rounded as Python round()',
    '  # denominator: { official: answered, paper: all }',
    '  aggregations:',
    '    - { metric: accuracy, label: Accuracy, kind: per-item }',
    '    # - { metric: by_level, kind: by-field, field: level }',
    '',
    "nativeOutputs:                   # a harness's own output file (JSONL), scored by loupe score --native-outputs",
    `  id: ${id}`,
    '  response: response',
    '# reference: reference            # folder of <block id>.py scripts printing {item id: response} as JSON',
    '',
  ];
  const text = lines.join('\n');
  parseManifest(text, `${dir}/loupe-benchmark.yaml`);
  return text;
}
