/**
 * `loupe export otel --run ID [--run ID ...] --endpoint URL [--store S]`: sends stored runs to an OTLP/HTTP endpoint
 * (Langfuse, Phoenix, an OpenTelemetry Collector, Jaeger...) as OpenTelemetry GenAI spans (`exportRunToOtel`,
 * `src/core/runs/otel.ts`). Source: issue 45 "OpenTelemetry".
 */
import {
  exportRunToOtel,
  describeOtelEndpoint,
  OTEL_GENAI_SEMCONV_VERSION,
  type OtelExportReport,
} from '../core/runs/otel.ts';
import { openExistingStore, STORE_OPTIONS } from './store-arg.ts';
import { JSON_OPTIONS, OTEL_OPTIONS, otelConfigFromArgs } from './option-groups.ts';
import { declareCommand, optionGroup, parseCommand } from './options.ts';
import { UsageError, type CliIo } from './types.ts';

/** How `loupe export otel` parses its arguments. */
export const EXPORT_OTEL = declareCommand({
  synopsis: 'export otel',
  positionals: true, // refused with a message of its own
  groups: [
    optionGroup('runs', {
      run: { type: 'string', multiple: true, value: 'ID', help: 'the stored run sent (repeatable; required)' },
      endpoint: {
        type: 'string',
        value: 'URL',
        help: 'the OTLP/HTTP endpoint (required; a base such as http://127.0.0.1:4318 gets /v1/traces)',
      },
    }),
    OTEL_OPTIONS,
    STORE_OPTIONS,
    JSON_OPTIONS,
  ],
  notes: `  Each run is one trace, following the OpenTelemetry GenAI semantic conventions ${OTEL_GENAI_SEMCONV_VERSION} (protobuf over HTTP):
    invoke_agent loupe <tool set>   the run (root): gen_ai.agent.name, gen_ai.conversation.id = run id, model,
                                    provider, total tokens, status; stored scores as gen_ai.evaluation.result events
                                    (one per summary metric: gen_ai.evaluation.name <benchmark>.<metric>, score.value
                                    or score.label); human hints as loupe.intervention events
      chat <model>                  one per step (model call): tokens, finish reason, gen_ai.output.messages
      execute_tool <name>           one per tool call: gen_ai.tool.name, gen_ai.tool.call.id, arguments, result
  Timestamps come from the stored steps. Texts are cut to --otel-max-text characters with a marker; no API key or
  URL of the model endpoint beyond its host is sent. Langfuse: --endpoint https://cloud.langfuse.com/api/public/otel
  --otel-header "Authorization=Basic $(printf %s "$LANGFUSE_PUBLIC_KEY:$LANGFUSE_SECRET_KEY" | base64 -w0)".
  Exit 1 when the endpoint refused or could not be reached (the first error is printed).
  --json prints { endpoint, semconv, runs: [{ runId, spans, evaluations, failedRequests, error? }] }`,
});

/** Runs `loupe export otel` (argv after `otel`). @returns the exit code. @throws UsageError for bad flags. */
export async function exportOtel(argv: string[], io: CliIo): Promise<number> {
  const { values: v, positionals } = parseCommand(EXPORT_OTEL, argv);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}' (give runs with --run ID)`);
  if (!v.run?.length) throw new UsageError('give --run ID (a stored run; repeatable)');
  if (!v.endpoint) throw new UsageError('give --endpoint URL (the OTLP/HTTP endpoint; there is no default)');
  const cfg = otelConfigFromArgs(v.endpoint, '--endpoint', v, io.env);
  const store = await openExistingStore(io, v.store);
  const reports: OtelExportReport[] = [];
  try {
    for (const id of v.run) {
      if (!(await store.getRun(id))) {
        throw new UsageError(`--run: no run '${id}' in ${store.location}`, { showUsage: false });
      }
    }
    for (const id of v.run) {
      const r = await exportRunToOtel(store, id, cfg);
      reports.push(r);
      if (!v.json) {
        io.out(
          r.error
            ? `${id}: NOT sent: ${r.error}\n`
            : `${id}: ${r.spans} spans, ${r.evaluations} evaluation events → ${describeOtelEndpoint(cfg.endpoint)}\n`,
        );
      }
    }
  } finally {
    await store.close();
  }
  if (v.json) {
    io.out(
      JSON.stringify({
        endpoint: describeOtelEndpoint(cfg.endpoint),
        semconv: OTEL_GENAI_SEMCONV_VERSION,
        runs: reports,
      }) + '\n',
    );
  }
  return reports.some((r) => r.error !== undefined) ? 1 : 0;
}
