/** Protocol of the Welcome panel: what Loupe sees on this machine and how to start. */
import { IpcRequest } from './ipc.ts';

export interface WelcomeState {
  version: string;
  vscodeVersion: string;
  node: string;
  suites: { suite: string; root: string }[];
  checks: { name: string; ok: boolean; detail: string }[];
}

export const RefreshWelcomeRequest = new IpcRequest<Record<string, never>, WelcomeState>('welcome/refresh');
