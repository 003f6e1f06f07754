/**
 * `loupe export <format>`: sends or writes stored runs in another tool's format. `otel`: OpenTelemetry GenAI spans
 * over OTLP/HTTP (`export-otel.ts`, issue 45).
 */
import { EXPORT_OTEL, exportOtel } from './export-otel.ts';
import { defineCommand } from './options.ts';
import { UsageError } from './types.ts';

export const exportCommand = defineCommand({
  name: 'export',
  summary: 'send stored runs elsewhere: otel (OpenTelemetry GenAI spans to an OTLP/HTTP endpoint such as Langfuse or Phoenix)',
  declarations: [EXPORT_OTEL],
  async run(argv, io) {
    const [sub, ...rest] = argv;
    if (sub === 'otel') return exportOtel(rest, io);
    throw new UsageError(sub ? `unknown format '${sub}' (known: otel)` : 'give a format: otel');
  },
});
