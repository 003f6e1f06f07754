/**
 * The command table: every `loupe.*` command id maps to its handler. package.json
 * `contributes.commands` must list the same ids (an integration test checks both directions).
 */
import * as vscode from 'vscode';
import type { LoupeContext } from './context.ts';
import { WelcomePanel } from './panels/welcome-panel.ts';

export type CommandHandler = (ctx: LoupeContext, ...args: unknown[]) => unknown;

export function createCommands(): Record<string, CommandHandler> {
  return {
    'loupe.showWelcome': (ctx) => {
      WelcomePanel.show(ctx);
      return true;
    },
    'loupe.showLog': (ctx) => ctx.output.show(true),
  };
}

/** Registers every command of the table. */
export function registerCommands(ctx: LoupeContext, table: Record<string, CommandHandler>): void {
  for (const [id, handler] of Object.entries(table)) {
    ctx.register(
      vscode.commands.registerCommand(id, async (...args: unknown[]) => {
        try {
          return await handler(ctx, ...args);
        } catch (e) {
          const msg = e instanceof Error ? e.message : String(e);
          ctx.log.error(`${id} failed: ${msg}`);
          void vscode.window.showErrorMessage(`Loupe: ${msg}`);
          return undefined;
        }
      }),
    );
  }
}
