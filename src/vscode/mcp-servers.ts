/**
 * "Loupe: Evaluate Chat Agent on Block" (issue 24): serves a block's tools to the editor's own agent mode over MCP.
 * The command picks a block, makes its task workspace (read-only copies of the visible files and TASK.md: no hidden
 * file, no link into the suite, no store, nothing naming the suite root) and registers the block's server with
 * `vscode.lm.registerMcpServerDefinitionProvider` (`contributes.mcpServerDefinitionProviders`): the editor starts
 * `loupe mcp` over stdio with the extension's own CLI, writing into this window's run store, so the run shows in the
 * Runs view while it happens. The chosen block is kept in the extension's global state, so a window opened on the
 * task workspace serves it too.
 */
import { join } from 'node:path';
import * as vscode from 'vscode';
import { createTaskWorkspace, type Block, type Suite } from '../core/benchmarks/index.ts';
import type { LoupeContext } from './context.ts';
import { suiteRegistry } from './suites.ts';
import { pickBlock, taskWorkspaceDir } from './task-workspace.ts';
import { isBlockNode } from './views/benchmarks-view.ts';
import { showInformationMessage } from './messages.ts';

/** The id of Loupe's MCP server definition provider (package.json `contributes.mcpServerDefinitionProviders`). */
export const MCP_PROVIDER_ID = 'loupe.blockServers';
const STATE_KEY = 'loupe.mcpBlock';

/** The block served to chat agents, as kept in global state. */
export interface ServedBlock {
  suite: string;
  root: string;
  blockId: string;
  title: string;
  /** The task workspace made for it. */
  workspace: string;
  /** Loader options of the suite (DDR `entities`, `database`), as configured. */
  entities?: string;
}

/** What the command returns (tests): the block served, the server definition's label, command and arguments. */
export interface EvaluateChatAgentResult extends ServedBlock {
  label: string;
  command: string;
  args: string[];
}

/** The stdio server definition of a served block: the extension's CLI (`dist/cli.js mcp`) on this window's store. */
export function serverDefinitionOf(ctx: LoupeContext, b: ServedBlock): vscode.McpStdioServerDefinition {
  const cli = join(ctx.extension.extensionPath, 'dist', 'cli.js');
  const s = ctx.settings;
  const args = [
    cli,
    'mcp',
    '--suite',
    b.suite,
    '--root',
    b.root,
    '--block',
    b.blockId,
    '--store',
    ctx.storePath,
    '--sandbox',
    s.sandbox,
    ...(s.pythonPath ? ['--python', s.pythonPath] : []),
    ...(b.entities ? ['--entities', b.entities] : []),
    '--max-steps',
    String(s.maxSteps),
  ];
  // The editor's own runtime runs the CLI (in the desktop editor an Electron binary, which runs as Node with this variable).
  const def = new vscode.McpStdioServerDefinition(
    `Loupe: ${b.title}`,
    process.execPath,
    args,
    { ELECTRON_RUN_AS_NODE: '1' },
    `${b.suite}/${b.blockId}`,
  );
  def.cwd = vscode.Uri.file(b.workspace);
  return def;
}

/** Registers the provider (at activation). */
export function registerMcpServers(ctx: LoupeContext): void {
  const changed = new vscode.EventEmitter<void>();
  ctx.register(changed);
  mcpChanged = changed;
  if (typeof vscode.lm?.registerMcpServerDefinitionProvider !== 'function') {
    ctx.log.warn(
      'this editor has no MCP server definition API (VS Code 1.101+): Evaluate Chat Agent on Block cannot register servers',
    );
    return;
  }
  ctx.register(
    vscode.lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, {
      onDidChangeMcpServerDefinitions: changed.event,
      provideMcpServerDefinitions: () => {
        const b = ctx.extension.globalState.get<ServedBlock>(STATE_KEY);
        return b ? [serverDefinitionOf(ctx, b)] : [];
      },
      resolveMcpServerDefinition: (def) => def,
    }),
  );
}

let mcpChanged: vscode.EventEmitter<void> | undefined;

/**
 * The command `loupe.evaluateChatAgent`. Argument: a block node of the Benchmarks view, `{ suite, root, blockId,
 * open?: false }`, or nothing (asks).
 * @returns the served block and its server definition, or undefined when cancelled.
 */
export async function evaluateChatAgentCommand(
  ctx: LoupeContext,
  arg?: unknown,
): Promise<EvaluateChatAgentResult | undefined> {
  let pair: { suite: Suite; block: Block } | undefined;
  let open = true;
  if (isBlockNode(arg)) pair = { suite: arg.suite, block: arg.block };
  else if (arg && typeof arg === 'object' && typeof (arg as { blockId?: unknown }).blockId === 'string') {
    const a = arg as { suite?: string; root?: string; blockId: string; open?: boolean };
    open = a.open !== false;
    pair = await suiteRegistry(ctx).findBlock(a.suite ?? '', a.root ?? '', a.blockId);
    if (!pair) throw new Error(`Block ${a.blockId} not found in the ${a.suite ?? ''} suite at ${a.root ?? ''}.`);
  } else pair = await pickBlock(ctx, 'Evaluate Chat Agent on Block', { runnableOnly: true });
  if (!pair) return undefined;
  if (!pair.block.runnable) {
    throw new Error(`${pair.block.title} is not runnable: ${pair.block.problems.slice(0, 3).join('; ')}`);
  }
  // Copies, never links: the chat agent brings its own file tools, and a link would name (and lead into) the suite.
  const made = createTaskWorkspace(pair.block, taskWorkspaceDir(ctx.runsDirectory, pair.suite, pair.block), {
    mode: 'copy',
  });
  const configured = ctx.settings.suites.find(
    (s) => s.suite === pair.suite.kind && (s.root === pair.suite.root || pair.suite.root.startsWith(s.root)),
  );
  const served: ServedBlock = {
    suite: pair.suite.kind,
    root: configured?.root ?? pair.suite.root,
    blockId: pair.block.id,
    title: pair.block.title,
    workspace: made.dir,
    ...(configured?.entities ? { entities: configured.entities } : {}),
  };
  await ctx.extension.globalState.update(STATE_KEY, served);
  mcpChanged?.fire();
  const def = serverDefinitionOf(ctx, served);
  ctx.log.info(
    `serving ${served.suite} block ${served.blockId} to chat agents as MCP server '${def.label}' (task workspace ${made.dir})`,
  );
  if (open) {
    const go = 'Open Task Workspace';
    void showInformationMessage(
      `Loupe serves ${served.title} to chat agents as the MCP server "${def.label}". Open the chat in agent mode and start the server from its tools list; every tool call is recorded as a run in the Runs view. The agent's own editor and terminal tools are not contained by Loupe: such runs are marked uncontained. Runs of chat agents cannot be given hints.`,
      go,
    ).then(
      (x) =>
        x === go &&
        vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(made.dir), { forceNewWindow: true }),
    );
  }
  return { ...served, label: def.label, command: def.command, args: def.args };
}
