/**
 * Loupe: Set Team Store Password — keeps the password of the team store named by the setting `loupe.store` in VS
 * Code's SecretStorage (never in settings, the store, logs or exports) and reconnects. Source: issue 26.
 */
import * as vscode from 'vscode';
import { storePasswordSecretName } from './config.ts';
import type { LoupeContext } from './context.ts';
import { refreshRuns } from './run/index.ts';
import { showErrorMessage, showWarningMessage } from './messages.ts';

/**
 * Asks for (or takes) the team store password and stores it.
 * @returns true when a password was stored.
 */
export async function setStorePassword(ctx: LoupeContext, raw?: unknown): Promise<boolean> {
  let loc;
  try {
    loc = ctx.storeLocation;
  } catch (e) {
    void showErrorMessage(
      `Loupe: the setting loupe.store is not a store location: ${e instanceof Error ? e.message : String(e)}`,
    );
    return false;
  }
  if (loc.engine !== 'postgres') {
    void showWarningMessage(
      'Loupe: the run store is a local file and needs no password. To share runs with a team, set loupe.store to a postgres:// URL first.',
    );
    return false;
  }
  const given = (raw as { password?: unknown } | undefined)?.password;
  const password =
    typeof given === 'string'
      ? given
      : await vscode.window.showInputBox({
          title: `Password of ${loc.user} on ${loc.url}`,
          password: true,
          ignoreFocusOut: true,
          prompt: 'Stored in VS Code SecretStorage; never written to settings, the store, logs or exports.',
        });
  if (password === undefined) return false;
  await ctx.extension.secrets.store(storePasswordSecretName(loc.url), password);
  ctx.reopenStore();
  ctx.fireRunsChanged();
  refreshRuns();
  return true;
}
