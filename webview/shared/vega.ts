/**
 * Vega-Lite rendering that works under the webview CSP (no 'unsafe-eval'): vega-embed with `ast: true` uses the
 * expression interpreter instead of `new Function`; its stylesheets adopted (no inline style). Colours follow the VS Code theme.
 */
import embed from 'vega-embed';
import type { TopLevelSpec } from 'vega-lite';
import { adoptCss } from './styles.ts';

function cssVar(name: string, fallback: string): string {
  return getComputedStyle(document.body).getPropertyValue(name).trim() || fallback;
}

/** Renders a Vega-Lite spec into `el` with theme-aware axis/label colours. */
export async function renderVegaLite(el: HTMLElement, spec: TopLevelSpec): Promise<void> {
  const fg = cssVar('--vscode-foreground', '#ccc');
  const grid = cssVar('--vscode-editorWidget-border', '#444');
  const font = cssVar('--vscode-font-family', 'sans-serif');
  await embed(el, spec, {
    ast: true,
    actions: false,
    renderer: 'svg',
    config: {
      background: 'transparent',
      font,
      axis: { labelColor: fg, titleColor: fg, gridColor: grid, domainColor: grid, tickColor: grid },
      legend: { labelColor: fg, titleColor: fg },
      title: { color: fg },
      view: { stroke: 'transparent' },
    },
  });
  // vega-embed and its tooltip handler add <style> elements, which the panels' CSP (no inline style) refuses: their
  // rules are adopted as constructed stylesheets instead
  for (const id of ['vega-embed-style', 'vega-tooltip-style']) {
    const el = document.getElementById(id);
    if (el?.tagName === 'STYLE' && el.textContent) adoptCss(el.textContent);
  }
}
