/**
 * Renders the annotation panel outside VS Code with a scripted host (by hand while developing):
 *   node esbuild.js && node test/helpers/preview-annotation.ts
 * Presses keys like an expert and prints what was submitted.
 */
import { preview } from './webview-preview.ts';
import type { AnnotationItemView, AnnotationState } from '../../src/protocol/annotation.ts';

const item = (pos: number): AnnotationItemView => ({
  queueId: 'q-1',
  pos,
  size: 3,
  itemId: `j:checklist-score:${pos}`,
  task: 'checklist-score',
  taskTitle: 'Score the response on this criterion (1–5)',
  criterion: 'Clarity',
  suite: 'analystbench',
  runId: 'r1',
  orphaned: false,
  fields: [
    { label: 'Criterion', text: 'Clarity', markdown: false },
    { label: 'Response', text: 'Obesity was 40.3%.\n\nIt doubled.', markdown: true, paragraphs: true },
  ],
  controls: [
    {
      field: 'score',
      label: 'Score',
      options: [1, 2, 3, 4, 5].map((n) => ({ value: n, label: String(n), key: String(n) })),
    },
  ],
  evidence: {
    steps: [{ step: 0, tools: ['python'], text: 'compute', error: false }],
    cells: [{ seq: 0, step: 0, code: 'df.mean()', output: '40.3', matches: ['40.3'] }],
    docs: [],
  },
  draft: null,
  mine: null,
  role: 'annotator',
  revealed: null,
  claims: [],
});
const queue = {
  queueId: 'q-1',
  name: 'Pending items',
  kind: 'items' as const,
  reviewers: 1,
  blind: true,
  annotator: 'me',
  total: 3,
  done: 0,
  byAnnotator: {},
  labels: {},
};
const submitted: unknown[] = [];
const res = await preview({
  panel: 'annotation',
  png: 'test-results/preview-annotation.png',
  handle: (method, params): AnnotationState | { state: AnnotationState } | undefined => {
    if (method === 'webview/ready') return { state: { queue, item: item(0) } };
    if (method === 'annotation/submit') {
      submitted.push(params);
      return {
        queue: { ...queue, done: 1 },
        item: { ...item(0), revealed: { others: [], resolution: { decidedBy: 'single', label: '4' } } },
      };
    }
    if (method === 'annotation/next') return { queue, item: item(((params as { afterPos: number }).afterPos + 1) % 3) };
    return undefined;
  },
  waitFor: '#controls',
  act: async (page, frame) => {
    await frame.locator('#queue-name').click();
    await page.keyboard.press('4');
    await page.keyboard.press('e');
    await page.keyboard.press(' ');
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+Enter');
    await page.waitForTimeout(300);
  },
});
console.log(JSON.stringify(submitted), res.errors, res.text.slice(0, 300));
