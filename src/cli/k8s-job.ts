import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { SANDBOX_REFUSED_EXIT } from '../core/kernel/sandbox-probe.ts';
import { UsageError } from './types.ts';
import {} from './option-groups.ts';
import { declareCommand, defineCommand, optionGroup, parseCommand } from './options.ts';

const DECL = declareCommand({
  synopsis: 'k8s-job',
  groups: [
    optionGroup('job', {
      image: { type: 'string', value: 'IMAGE', help: 'the worker image (required)' },
      workers: { type: 'string', value: 'N', help: 'worker pods (required)' },
      'store-secret': {
        type: 'string',
        value: 'NAME',
        help: 'the Secret holding store-url, password and optionally api-key (required)',
      },
      out: { type: 'string', value: 'FILE', help: 'write the manifest here (default stdout)' },
      name: { type: 'string', value: 'NAME', help: "the Job's name" },
      namespace: { type: 'string', value: 'NS', help: 'its namespace' },
      concurrency: { type: 'string', value: 'K', help: 'units each worker drives at a time' },
      root: { type: 'string', value: 'DIR', help: 'the suite inside the pods' },
      'data-claim': { type: 'string', value: 'PVC', help: 'the claim mounted read-only at --root' },
      sweep: { type: 'string', value: 'ID', help: 'the sweep the workers take units of' },
      'api-key-env': {
        type: 'string',
        value: 'VAR',
        help: "the variable the models' key is given to the workers as (default OPENAI_API_KEY)",
      },
      cpu: { type: 'string', value: 'C', help: 'CPU per pod' },
      memory: { type: 'string', value: 'M', help: 'memory per pod' },
    }),
  ],
  notes: `  Writes a Kubernetes Job manifest (JSON; kubectl apply -f FILE) whose N pods run \`loupe worker --until-empty\` on the
  sweep queue of the team store, built with kubernetes-models and validated by it. The Secret NAME holds
  store-url (postgres://USER@HOST:PORT/DB, no password), password, and optionally api-key (the models' key, given to
  the workers as VAR, default OPENAI_API_KEY). The pods get what bubblewrap needs (their own user namespace, an
  unmasked /proc, seccomp and AppArmor unconfined; no privilege, no capability); a worker that still cannot create
  its sandbox exits ${SANDBOX_REFUSED_EXIT} and the Job fails at once. --root DIR: the suite inside the pods (mounted
  read-only from --data-claim PVC). The worker image: Containerfile at the top of the repository.`,
});

export const k8sJobCommand = defineCommand({
  name: 'k8s-job',
  summary: 'write a validated Kubernetes Job manifest whose pods run sweep workers (loupe worker)',
  declarations: [DECL],
  async run(argv, io) {
    const { values: v } = parseCommand(DECL, argv);
    if (!v.image || !v.workers || !v['store-secret']) {
      throw new UsageError('--image, --workers and --store-secret are required');
    }
    const workers = Number(v.workers);
    const concurrency = v.concurrency === undefined ? undefined : Number(v.concurrency);
    // loaded on use, without the deprecation warning (node's punycode) its schema validator's dependencies cause
    const quiet = process.noDeprecation;
    process.noDeprecation = true;
    const { workerJobManifest } = await import('../core/runs/k8s-job.ts').finally(() => {
      process.noDeprecation = quiet;
    });
    const manifest = workerJobManifest({
      image: v.image,
      workers,
      storeSecret: v['store-secret'],
      ...(v.name ? { name: v.name } : {}),
      ...(v.namespace ? { namespace: v.namespace } : {}),
      ...(concurrency !== undefined ? { concurrency } : {}),
      ...(v.root ? { root: v.root } : {}),
      ...(v['data-claim'] ? { dataClaim: v['data-claim'] } : {}),
      ...(v.sweep ? { sweepId: v.sweep } : {}),
      ...(v['api-key-env'] ? { apiKeyEnv: v['api-key-env'] } : {}),
      ...(v.cpu ? { cpu: v.cpu } : {}),
      ...(v.memory ? { memory: v.memory } : {}),
    });
    const text = JSON.stringify(manifest, null, 2) + '\n';
    if (v.out) {
      const file = resolve(io.cwd, v.out);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
      io.err(
        `k8s-job: ${file} (Job ${(manifest.metadata as { name: string }).name}, ${workers} worker pod(s)); apply with: kubectl apply -f ${v.out}\n`,
      );
    } else io.out(text);
    return 0;
  },
});
