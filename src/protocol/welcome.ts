/** Protocol of the Welcome panel: what Loupe sees on this machine and how to start. */
import { IpcRequest } from './ipc.ts';

export interface WelcomeState {
  version: string;
  vscodeVersion: string;
  node: string;
  suites: { suite: string; root: string }[];
  checks: { name: string; ok: boolean; detail: string }[];
  /** Runs in the store (issue 22: the next step after the checks depends on it). */
  runs: number;
}

export const RefreshWelcomeRequest = new IpcRequest<Record<string, never>, WelcomeState>('welcome/refresh');
/** Opens the setting loupe.suites (the next step when no suite is configured). */
export const ConfigureSuitesRequest = new IpcRequest<Record<string, never>, void>('welcome/configureSuites');
