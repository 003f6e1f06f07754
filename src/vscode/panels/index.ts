/**
 * Every panel kind of the extension, listed once: activation registers their serializers (restore after a
 * window reload) from this list. A new panel adds its host here (see CONTRIBUTING.md, "Adding a panel").
 */
import { GroundTruthPanel } from './ground-truth-panel.ts';
import { BladeDecisionsPanel } from './blade-decisions-panel.ts';
import { RankingPanel, ReviewPanel } from './review-panel.ts';
import type { LoupeContext } from '../context.ts';
import { AgreementPanel, AnnotationPanel } from './annotation-panel.ts';
import { ChecklistPanel } from './checklist-panel.ts';
import { DocSearchPanel } from './docsearch-panel.ts';
import { type LoupePanel, type PanelHost, registerPanelSerializers } from './panel-base.ts';
import { ResultsPanel } from './results-panel.ts';
import { TimelinePanel } from './timeline-panel.ts';
import { WelcomePanel } from './welcome-panel.ts';
import { FailuresPanel } from './failures-panel.ts';
import { ItemPanel } from './item-panel.ts';
import { VariablesPanel } from './variables-panel.ts';
import { ComparePanel } from './compare-panel.ts';
import { ForkDiffPanel } from './fork-diff-panel.ts';
import { MatrixPanel } from './matrix-panel.ts';

export const panelHosts: readonly PanelHost<LoupePanel, string>[] = [
  WelcomePanel.host,
  ResultsPanel.host,
  DocSearchPanel.host,
  TimelinePanel.host,
  AnnotationPanel.host,
  AgreementPanel.host,
  ChecklistPanel.host,
  ReviewPanel.host,
  RankingPanel.host,
  GroundTruthPanel.host,
  BladeDecisionsPanel.host,
  FailuresPanel.host,
  ItemPanel.host,
  VariablesPanel.host,
  ComparePanel.host,
  ForkDiffPanel.host,
  MatrixPanel.host,
];

/** Registers the serializers of all panels (activation). */
export function registerPanels(ctx: LoupeContext): void {
  registerPanelSerializers(ctx, panelHosts);
}
