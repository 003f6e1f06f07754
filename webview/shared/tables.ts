/**
 * The stylesheet of Loupe's statistics tables (agreement view, pairwise ranking): theme borders, tabular numbers,
 * right-aligned numeric cells (`td.num`), muted notes, error/warning text. One copy, appended once per webview.
 */
import { adoptCss } from './styles.ts';

export const STAT_TABLE_CSS = `
body { padding: 0 12px; }
table { border-collapse: collapse; margin: 6px 0 12px; }
th, td { text-align: left; padding: 3px 10px; border-bottom: 1px solid var(--vscode-panel-border, rgba(128,128,128,.3)); font-variant-numeric: tabular-nums; }
td.num, th.num { text-align: right; }
th { color: var(--vscode-descriptionForeground); font-weight: 600; }
.muted { color: var(--vscode-descriptionForeground); }
.error { color: var(--vscode-errorForeground); }
.warn { color: var(--vscode-editorWarning-foreground, #d29922); }
`;

/** Adopts STAT_TABLE_CSS plus the view's own `extra` rules (a constructed stylesheet: the CSP allows no inline style). */
export function useStatTableStyles(extra = ''): void {
  adoptCss(STAT_TABLE_CSS + extra);
}
