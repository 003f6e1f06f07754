/**
 * The "Loupe: <block>" terminal: the live transcript of a run; keys p (pause), i (add a hint while paused), r (resume), s (stop).
 * Only Loupe's own colour sequences reach it: agent, model and observation text is neutralised by `formatAgentEvent`
 * and by the callers of `write` (issue 38).
 */
import * as vscode from 'vscode';
import type { RunControl } from '../../core/agent/loop.ts';
import { formatAgentEvent } from '../../core/agent/transcript.ts';
import { oneLine } from '../../core/util/text-safety.ts';
import type { AgentEvent } from '../../core/agent/types.ts';

export class TranscriptTerminal implements vscode.Disposable {
  private readonly writeEmitter = new vscode.EventEmitter<string>();
  /** Created when first shown (issue 22: repeats that are not shown add no terminal). */
  private terminal: vscode.Terminal | undefined;
  private readonly title: string;
  private readonly pty: vscode.Pseudoterminal;
  private readonly buffer: string[] = [];
  private opened = false;
  private readonly startMs = Date.now();
  /** Everything written so far, without colours (tests read it). */
  readonly plain: string[] = [];

  private readonly onKey: ((key: string) => void) | undefined;

  constructor(title: string, control: RunControl | undefined, onKey?: (key: string) => void) {
    this.onKey = onKey;
    const pty: vscode.Pseudoterminal = {
      onDidWrite: this.writeEmitter.event,
      open: () => {
        this.opened = true;
        for (const b of this.buffer.splice(0)) this.writeEmitter.fire(b);
      },
      close: () => undefined,
      handleInput: (data) => {
        const k = data.toLowerCase();
        if (!control) return;
        if (k === 'p') {
          control.pause();
          this.write('\r\n\x1b[33m‖ pausing after the current step…\x1b[0m\r\n');
        } else if (k === 'r') {
          control.resume();
        } else if (k === 's') {
          control.stop('stopped from the terminal');
          this.write('\r\n\x1b[33m■ stopping…\x1b[0m\r\n');
        }
        this.onKey?.(k);
      },
    };
    this.title = title;
    this.pty = pty;
    this.write(
      `\x1b[1m${oneLine(title)}\x1b[0m — keys: \x1b[1mp\x1b[0m pause after this step · \x1b[1mi\x1b[0m add a hint (paused) · \x1b[1mr\x1b[0m resume · \x1b[1ms\x1b[0m stop\r\n`,
    );
  }

  show(preserveFocus = true): void {
    this.terminal ??= vscode.window.createTerminal({
      name: this.title,
      pty: this.pty,
      iconPath: new vscode.ThemeIcon('eye'),
    });
    this.terminal.show(preserveFocus);
  }

  write(text: string): void {
    // eslint-disable-next-line no-control-regex
    this.plain.push(text.replace(/\x1b\[[0-9;]*m/g, ''));
    if (this.opened) this.writeEmitter.fire(text);
    else this.buffer.push(text);
  }

  event(e: AgentEvent): void {
    const s = formatAgentEvent(e, { startMs: this.startMs });
    if (s) this.write(s);
  }

  dispose(): void {
    this.writeEmitter.dispose();
  }
}
