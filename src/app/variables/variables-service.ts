/**
 * The Variables panel's host logic without `vscode` (issue 25): opens the documentation index of one survey,
 * builds its variable catalog, answers question-mode requests, and writes the pandas snippet of a variable.
 * The panel (src/vscode/panels/variables-panel.ts) wires it to a WebviewPanel.
 */
import { extname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { docsFolderFiles, openDocIndex, type DocIndex } from '../../core/docs/index.ts';
import { QuestionRetriever, decomposeWithModel } from '../../core/docs/question.ts';
import { surveyCatalog, type SurveyCatalog } from '../../core/docs/survey-catalog.ts';
import { LoupeInputError, errorMessage } from '../../core/util/errors.ts';
import type { QuestionAnswer, VariableRow, VariablesState, VariablesTarget } from '../../protocol/variables.ts';

/**
 * A Python snippet that reads one variable from its data file with pandas, commented with its label, codes and
 * the codebook page that defines it.
 * @param v the variable (name, label, file, doc, page, values); `dataPath` absolute path of its data file.
 * @returns Python source (ends with a newline).
 * @throws LoupeInputError naming the data file when pandas has no reader for its extension.
 * Source: pandas `read_sas` (format "xport" for SAS transport), `read_csv`, `read_excel`, `read_spss`, `read_stata`, `read_parquet`.
 */
export function pandasSnippet(
  v: Pick<VariableRow, 'name' | 'label' | 'file' | 'doc' | 'page' | 'values'>,
  dataPath: string,
): string {
  const ext = extname(dataPath).toLowerCase();
  const path = JSON.stringify(dataPath);
  const readers: Record<string, string> = {
    '.xpt': `pd.read_sas(${path}, format="xport", encoding="latin-1")`,
    '.sas7bdat': `pd.read_sas(${path}, format="sas7bdat", encoding="latin-1")`,
    '.csv': `pd.read_csv(${path})`,
    '.tsv': `pd.read_csv(${path}, sep="\\t")`,
    '.xlsx': `pd.read_excel(${path})`,
    '.sav': `pd.read_spss(${path})`,
    '.dta': `pd.read_stata(${path})`,
    '.parquet': `pd.read_parquet(${path})`,
  };
  const reader = readers[ext];
  if (!reader) throw new LoupeInputError(dataPath, `pandas has no reader for "${ext}" files`);
  const table = v.file
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .replace(/^(\d)/, '_$1');
  const col = v.name.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  const lines = [
    `# ${v.name}: ${v.label ?? 'undocumented (no codebook entry)'}${v.doc ? ` (${v.doc}, ${v.page ?? ''})` : ''}`,
  ];
  const codes = v.values.filter((x) => x.label);
  if (codes.length) {
    lines.push(
      `# codes: ${codes
        .slice(0, 12)
        .map((x) => `${x.code} = ${x.label}`)
        .join('; ')}${codes.length > 12 ? '; …' : ''}`,
    );
  }
  lines.push(
    'import pandas as pd',
    `${table} = ${reader}`,
    `${col} = ${table}[${JSON.stringify(v.name)}]`,
    `${col}.describe()`,
  );
  return lines.join('\n') + '\n';
}

export interface VariablesServiceOptions {
  /** Folder of the documentation index cache. */
  cacheDir: string;
  /** Called when the state changed (building → ready / error). */
  onState?: (s: VariablesState) => void;
  /** Builds the index in another process first (PDF extraction off the caller's thread); errors fall back to building here. */
  prebuild?: () => Promise<void>;
  onPrebuildError?: (e: unknown) => void;
}

/** One survey's catalog for the panel. */
export class VariablesService {
  readonly target: VariablesTarget;
  private readonly opts: VariablesServiceOptions;
  private idx: DocIndex | undefined;
  private cat: SurveyCatalog | undefined;
  private qr: QuestionRetriever | undefined;
  private status: VariablesState['status'] = 'idle';
  private message: string | undefined;
  private building: Promise<void> | undefined;
  private disposed = false;

  constructor(target: VariablesTarget, opts: VariablesServiceOptions) {
    this.target = target;
    this.opts = opts;
  }

  /** Opens and builds the index and the catalog (once; later calls await the same build). */
  build(): Promise<void> {
    this.building ??= this.doBuild();
    return this.building;
  }

  private async doBuild(): Promise<void> {
    this.status = 'building';
    this.message = `Reading the ${this.target.survey} codebooks…`;
    this.opts.onState?.(this.state());
    try {
      const files = docsFolderFiles(this.target.root, this.target.survey);
      if (this.opts.prebuild) {
        try {
          await this.opts.prebuild();
        } catch (e) {
          this.opts.onPrebuildError?.(e);
        }
      }
      if (this.disposed) return;
      this.idx = await openDocIndex({ root: this.target.root, cacheDir: this.opts.cacheDir, files });
      await this.idx.build();
      this.cat = surveyCatalog(this.idx, join(this.target.root, this.target.survey, 'data'), this.target.root);
      this.qr = new QuestionRetriever(this.idx, this.cat.variables);
      this.status = 'ready';
      this.message = undefined;
    } catch (e) {
      this.status = 'error';
      this.message = errorMessage(e);
    }
    if (!this.disposed) this.opts.onState?.(this.state());
  }

  /** What the webview shows. */
  state(): VariablesState {
    const cat = this.cat;
    const rows: VariableRow[] = (cat?.variables ?? []).map((v) => {
      const r: VariableRow = {
        name: v.name,
        label: v.label,
        file: v.file,
        doc: v.doc,
        page: v.page,
        universe: v.universe,
        text: v.text,
        values: v.values,
        documented: v.documented,
      };
      if (v.dataLabel !== undefined) r.dataLabel = v.dataLabel;
      const dp = cat?.dataFiles[v.file];
      if (dp) r.dataPath = dp;
      return r;
    });
    const s: VariablesState = {
      target: this.target,
      status: this.status,
      variables: rows,
      problems: cat?.problems ?? [],
      coverage: cat?.coverage ?? { columns: 0, documented: 0 },
    };
    if (this.message) s.message = this.message;
    return s;
  }

  /** The catalog entry of `name` in data file `file`. @throws LoupeInputError when the catalog has no such variable. */
  variable(name: string, file: string): VariableRow {
    const v = this.state().variables.find((x) => x.name === name && x.file === file);
    if (!v) throw new LoupeInputError(`${file}.${name}`, `no such variable in the ${this.target.survey} catalog`);
    return v;
  }

  /**
   * Question-mode retrieval: candidate variables and documentation files. Without `model`, the question alone is
   * decomposed (groupings, design, measure words); with `model`, the model first breaks the question into
   * population, measures, groupings and design phrases, and its measures and population are matched as extra
   * sub-queries (issue 25, optional LLM-assisted decomposition).
   * @param question the analyst's question; `model.complete(system, user)` calls the model and resolves to its reply
   *   text, `model.label` names it in the answer (e.g. the profile name).
   * @returns the answer (`elapsedMs`: wall-clock ms of the whole request, model call included; `decomposition`: the
   *   model's phrases and the sub-queries used, when a model was asked).
   * @throws LoupeInputError for an empty question or a model reply with no JSON object; whatever `complete` throws.
   */
  async ask(
    question: string,
    model?: { label: string; complete: (system: string, user: string) => Promise<string> },
  ): Promise<QuestionAnswer> {
    if (!this.qr) throw new Error('The catalog is still being built.');
    if (!question.trim()) throw new LoupeInputError('question', 'type a question first');
    const t0 = performance.now();
    const llm = model ? await decomposeWithModel(question, model.complete) : undefined;
    const subQueries = llm ? [...llm.measures, ...llm.population] : [];
    const r = this.qr.ask(question, {
      top: 10,
      topVariables: 30,
      ...(subQueries.length ? { extraMeasures: subQueries } : {}),
    });
    const answer: QuestionAnswer = {
      concepts: r.concepts,
      variables: r.variables.map((v) => ({ name: v.name, file: v.file, why: v.why, score: v.score })),
      files: r.files.map((f) => ({ file: f.file, from: f.from })),
      elapsedMs: Math.round((performance.now() - t0) * 10) / 10,
    };
    if (llm && model) answer.decomposition = { model: model.label, ...llm, subQueries };
    return answer;
  }

  /**
   * The pandas snippet of a variable.
   * @throws LoupeInputError when the survey's data folder has no file for the variable's table.
   */
  snippet(name: string, file: string): string {
    const v = this.variable(name, file);
    if (!v.dataPath) {
      throw new LoupeInputError(
        `${this.target.survey} data`,
        `no data file for table ${file} under ${join(this.target.root, this.target.survey, 'data')}`,
      );
    }
    return pandasSnippet(v, join(this.target.root, v.dataPath));
  }

  dispose(): void {
    this.disposed = true;
    this.idx?.close();
  }
}
