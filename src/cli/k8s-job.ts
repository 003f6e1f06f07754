import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { SANDBOX_REFUSED_EXIT } from '../core/kernel/sandbox-probe.ts';
import { UsageError, type CliCommand } from './types.ts';

const USAGE = `loupe k8s-job --image IMAGE --workers N --store-secret NAME [--out FILE] [--name NAME] [--namespace NS]
          [--concurrency K] [--root DIR [--data-claim PVC]] [--sweep ID] [--api-key-env VAR] [--cpu C] [--memory M]
  Writes a Kubernetes Job manifest (JSON; kubectl apply -f FILE) whose N pods run \`loupe worker --until-empty\` on the
  sweep queue of the team store, built with kubernetes-models and validated by it. The Secret NAME holds
  store-url (postgres://USER@HOST:PORT/DB, no password), password, and optionally api-key (the models' key, given to
  the workers as VAR, default OPENAI_API_KEY). The pods get what bubblewrap needs (their own user namespace, an
  unmasked /proc, seccomp and AppArmor unconfined; no privilege, no capability); a worker that still cannot create
  its sandbox exits ${SANDBOX_REFUSED_EXIT} and the Job fails at once. --root DIR: the suite inside the pods (mounted
  read-only from --data-claim PVC). The worker image: Containerfile at the top of the repository.`;

export const k8sJobCommand: CliCommand = {
  name: 'k8s-job',
  summary: 'write a validated Kubernetes Job manifest whose pods run sweep workers (loupe worker)',
  usage: USAGE,
  async run(argv, io) {
    const { values: v } = parseArgs({
      args: argv,
      options: {
        image: { type: 'string' }, workers: { type: 'string' }, 'store-secret': { type: 'string' }, out: { type: 'string' }, name: { type: 'string' },
        namespace: { type: 'string' }, concurrency: { type: 'string' }, root: { type: 'string' }, 'data-claim': { type: 'string' }, sweep: { type: 'string' },
        'api-key-env': { type: 'string' }, cpu: { type: 'string' }, memory: { type: 'string' },
      },
    });
    if (!v.image || !v.workers || !v['store-secret']) throw new UsageError('--image, --workers and --store-secret are required');
    const workers = Number(v.workers);
    const concurrency = v.concurrency === undefined ? undefined : Number(v.concurrency);
    // loaded on use, without the deprecation warning (node's punycode) its schema validator's dependencies cause
    const quiet = process.noDeprecation;
    process.noDeprecation = true;
    const { workerJobManifest } = await import('../core/runs/k8s-job.ts').finally(() => { process.noDeprecation = quiet; });
    const manifest = workerJobManifest({
      image: v.image, workers, storeSecret: v['store-secret'], ...(v.name ? { name: v.name } : {}), ...(v.namespace ? { namespace: v.namespace } : {}),
      ...(concurrency !== undefined ? { concurrency } : {}), ...(v.root ? { root: v.root } : {}), ...(v['data-claim'] ? { dataClaim: v['data-claim'] } : {}),
      ...(v.sweep ? { sweepId: v.sweep } : {}), ...(v['api-key-env'] ? { apiKeyEnv: v['api-key-env'] } : {}), ...(v.cpu ? { cpu: v.cpu } : {}), ...(v.memory ? { memory: v.memory } : {}),
    });
    const text = JSON.stringify(manifest, null, 2) + '\n';
    if (v.out) {
      const file = resolve(io.cwd, v.out);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
      io.err(`k8s-job: ${file} (Job ${(manifest.metadata as { name: string }).name}, ${workers} worker pod(s)); apply with: kubectl apply -f ${v.out}\n`);
    } else io.out(text);
    return 0;
  },
};
