/**
 * The timeline's side of stepping into a run (issue 20): serves the run's human steps, fork links and run controls
 * to the webview, carries out its actions (pause, add a hint, resume, fork from a step) and pushes changes when the
 * live run pauses, resumes or takes a hint. Attached to every timeline by the run UI (`TimelinePanel.attachAssistance`).
 */
import * as vscode from 'vscode';
import {
  DidChangeAssistanceNotification,
  GetAssistanceRequest,
  RunActionRequest,
} from '../../protocol/intervention.ts';
import type { RpcEndpoint } from '../../protocol/ipc.ts';
import { errorMessage } from '../../core/util/errors.ts';
import type { LoupeContext } from '../context.ts';
import {
  assistanceState,
  compareForkWithParentCommand,
  compareForksCommand,
  forkRunCommand,
  interveneCommand,
} from './intervene-commands.ts';
import { RunSession } from './run-session.ts';

/** Wires one timeline panel. @returns what to dispose with the panel. */
export function attachTimelineAssistance(ctx: LoupeContext, rpc: RpcEndpoint, runId: string): vscode.Disposable {
  rpc.onRequest(GetAssistanceRequest, ({ runId: id }) => assistanceState(ctx, id));
  const push = async () => {
    try {
      rpc.notify(DidChangeAssistanceNotification, await assistanceState(ctx, runId));
    } catch {
      /* the run was deleted: the panel closes */
    }
  };
  rpc.onRequest(RunActionRequest, async ({ runId: id, action, step }) => {
    const session = RunSession.get(id);
    const live = !!session && !session.result;
    try {
      if (action === 'pause' || action === 'resume') {
        if (!live) return { ok: false, message: 'The run is not running in this window.' };
        if (action === 'pause') {
          session.control.pause();
          session.terminal.write('\r\n\x1b[33m‖ pausing after the current step (from the timeline)…\x1b[0m\r\n');
        } else session.control.resume();
        await push();
        return { ok: true };
      }
      if (action === 'intervene') {
        const rec = await interveneCommand(ctx, id);
        await push();
        return rec
          ? { ok: true, message: `${rec.kind} #${rec.seq} recorded before step ${rec.beforeStep + 1}` }
          : { ok: false };
      }
      if (action === 'compareForkWithParent') {
        const f = await compareForkWithParentCommand(ctx, id);
        return f ? { ok: true } : { ok: false, message: 'This run is not a fork and has no fork yet.' };
      }
      if (action === 'compareForks') {
        const q = await compareForksCommand(ctx, id);
        return q ? { ok: true } : { ok: false, message: 'No two forks from the same step yet.' };
      }
      const fork = await forkRunCommand(ctx, id, step, undefined, undefined, { background: true });
      await push();
      return fork ? { ok: true, message: `fork ${fork} started` } : { ok: false };
    } catch (e) {
      return { ok: false, message: errorMessage(e) };
    }
  });
  const subs = [
    RunSession.onDidChangeAssistance((id) => {
      if (id === runId) void push();
    }),
    RunSession.onDidChange(() => void push()),
  ];
  return { dispose: () => subs.forEach((s) => s.dispose()) };
}
