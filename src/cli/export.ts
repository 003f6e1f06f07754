/**
 * `loupe export <format>`: sends or writes stored runs in another tool's format (issue 45). `otel`: OpenTelemetry
 * GenAI spans over OTLP/HTTP (`export-otel.ts`); `inspect`: an Inspect AI evaluation log (`export-inspect.ts`).
 */
import { EXPORT_INSPECT, exportInspect } from './export-inspect.ts';
import { EXPORT_OTEL, exportOtel } from './export-otel.ts';
import { defineCommand } from './options.ts';
import { UsageError } from './types.ts';

export const exportCommand = defineCommand({
  name: 'export',
  summary:
    "send or write stored runs in another tool's format: otel (OpenTelemetry GenAI spans to an OTLP/HTTP endpoint such as Langfuse or Phoenix), inspect (an Inspect AI log)",
  declarations: [EXPORT_OTEL, EXPORT_INSPECT],
  async run(argv, io) {
    const [sub, ...rest] = argv;
    if (sub === 'otel') return exportOtel(rest, io);
    if (sub === 'inspect') return exportInspect(rest, io);
    throw new UsageError(sub ? `unknown format '${sub}' (known: otel, inspect)` : 'give a format: otel or inspect');
  },
});
