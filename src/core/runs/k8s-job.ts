/**
 * The Kubernetes Job that runs a sweep's workers (issue 27): `parallelism` pods of the worker image, each running
 * `loupe worker --until-empty` against the team store (the work-queue pattern: no `completions`; a pod exits 0 once
 * the queue is drained). Built with the typed models of `kubernetes-models` and validated by that library against
 * the Kubernetes OpenAPI schema before it is written.
 *
 * What the sandbox needs: bubblewrap creates user, pid, mount, network namespaces and mounts a new /proc. So the pod
 * gets its own user namespace (`hostUsers: false`: container root is an unprivileged host user) and the worker
 * container an unmasked /proc (`procMount: Unmasked`, allowed in a user-namespaced pod; a masked /proc has
 * over-mounts that forbid mounting a new one), and the container runtime's default seccomp and AppArmor profiles —
 * which refuse `unshare(CLONE_NEWUSER)` and `mount` — are replaced by `Unconfined`. Nothing else: not privileged, no
 * capability (all dropped), no privilege escalation, not root, read-only root file system. A worker whose sandbox
 * still cannot be created refuses to start with exit code {@link SANDBOX_REFUSED_EXIT}, and the Job's pod failure
 * policy fails the Job at once with that reason (rather than restarting pods that can never run a unit).
 * Source: issue 27 "Kubernetes"; Kubernetes docs "Jobs: work queue", "User namespaces", "Pod failure policy".
 */
import { Job } from 'kubernetes-models/batch/v1/Job';
import { LoupeInputError } from '../util/errors.ts';
import { SANDBOX_REFUSED_EXIT } from '../kernel/sandbox-probe.ts';

export { SANDBOX_REFUSED_EXIT };

/** What the Job is made of (see {@link workerJobManifest}). */
export interface WorkerJobOptions {
  /** The worker image (built from the repository's Containerfile). */
  image: string;
  /** Pods running at once (`parallelism`). */
  workers: number;
  /**
   * Name of the Secret with the team store: key `store-url` (a postgres:// URL without password), key `password`
   * (PGPASSWORD), optional key `api-key` (the models' key, given to the workers as `apiKeyEnv`).
   */
  storeSecret: string;
  /** Job name (default `loupe-sweep-workers`). */
  name?: string;
  namespace?: string;
  /** Units each pod drives at once (default 1). */
  concurrency?: number;
  /** The environment variable the units read the model key from (default OPENAI_API_KEY). */
  apiKeyEnv?: string;
  /** The suite root inside the pods (passed as `--root`); with `dataClaim`, where that claim is mounted read-only. */
  root?: string;
  /** A PersistentVolumeClaim holding the suite data. */
  dataClaim?: string;
  /** The sweep the Job is for (a label only: workers take any unit of the queue). */
  sweepId?: string;
  /** Requests of each worker container (default cpu 1, memory 2Gi). */
  cpu?: string;
  memory?: string;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/**
 * Builds and validates the worker Job manifest.
 * @param o see {@link WorkerJobOptions}: `workers` 1–1000, `concurrency` 1–64, names as Kubernetes spells them.
 * @returns the manifest as a plain object (`apiVersion: batch/v1`, `kind: Job`), ready for JSON or YAML.
 * @throws LoupeInputError naming the option at fault, or `Job manifest` with the schema's message when
 *   `kubernetes-models` rejects the result.
 */
export function workerJobManifest(o: WorkerJobOptions): Record<string, unknown> {
  const name = o.name ?? 'loupe-sweep-workers';
  if (!DNS_LABEL.test(name) || name.length > 63) {
    throw new LoupeInputError(
      `job name '${name}'`,
      'must be a DNS label: lower-case letters, digits and "-", at most 63 characters',
    );
  }
  if (!o.image.trim() || /\s/.test(o.image)) {
    throw new LoupeInputError(`image '${o.image}'`, 'must be an image reference (registry/name:tag)');
  }
  if (!Number.isInteger(o.workers) || o.workers < 1 || o.workers > 1000) {
    throw new LoupeInputError('workers', `must be a whole number from 1 to 1000, got ${o.workers}`);
  }
  const concurrency = o.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) {
    throw new LoupeInputError('concurrency', `must be a whole number from 1 to 64, got ${concurrency}`);
  }
  if (!DNS_SUBDOMAIN.test(o.storeSecret) || o.storeSecret.length > 253) {
    throw new LoupeInputError(
      `store secret '${o.storeSecret}'`,
      'must be the name of a Kubernetes Secret (lower-case letters, digits, "-" and ".")',
    );
  }
  if (o.namespace !== undefined && (!DNS_LABEL.test(o.namespace) || o.namespace.length > 63)) {
    throw new LoupeInputError(`namespace '${o.namespace}'`, 'must be a DNS label');
  }
  if (o.dataClaim !== undefined && (!DNS_SUBDOMAIN.test(o.dataClaim) || !o.root)) {
    throw new LoupeInputError(
      `data claim '${o.dataClaim}'`,
      'must be a PersistentVolumeClaim name, given with the root it is mounted at',
    );
  }
  if (o.root !== undefined && !o.root.startsWith('/')) {
    throw new LoupeInputError(`root '${o.root}'`, 'must be an absolute path inside the pods');
  }
  if (o.sweepId !== undefined && (!LABEL_VALUE.test(o.sweepId) || o.sweepId.length > 63)) {
    throw new LoupeInputError(
      `sweep '${o.sweepId}'`,
      'must be usable as a label value (at most 63 letters, digits, "-", "_", ".")',
    );
  }
  const apiKeyEnv = o.apiKeyEnv ?? 'OPENAI_API_KEY';
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(apiKeyEnv)) {
    throw new LoupeInputError(`api key variable '${apiKeyEnv}'`, 'is not an environment variable name');
  }
  const labels: Record<string, string> = {
    'app.kubernetes.io/name': 'loupe-worker',
    'app.kubernetes.io/component': 'sweep-worker',
    ...(o.sweepId ? { 'loupe.dev/sweep': o.sweepId } : {}),
  };
  const args = [
    'worker',
    '--store',
    '$(LOUPE_STORE)',
    '--concurrency',
    String(concurrency),
    '--until-empty',
    ...(o.root ? ['--root', o.root] : []),
  ];
  const job = new Job({
    metadata: { name, ...(o.namespace ? { namespace: o.namespace } : {}), labels },
    spec: {
      parallelism: o.workers,
      // a failed pod is replaced (its unit is retried by the queue); a worker that cannot sandbox fails the Job
      backoffLimit: Math.max(6, o.workers * 2),
      ttlSecondsAfterFinished: 7 * 24 * 3600,
      podFailurePolicy: {
        rules: [
          {
            action: 'FailJob',
            onExitCodes: { containerName: 'worker', operator: 'In', values: [SANDBOX_REFUSED_EXIT] },
          },
          { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
        ],
      },
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          hostUsers: false,
          terminationGracePeriodSeconds: 60,
          automountServiceAccountToken: false,
          securityContext: { runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, fsGroup: 10001 },
          containers: [
            {
              name: 'worker',
              image: o.image,
              args,
              workingDir: '/work',
              env: [
                { name: 'LOUPE_STORE', valueFrom: { secretKeyRef: { name: o.storeSecret, key: 'store-url' } } },
                { name: 'PGPASSWORD', valueFrom: { secretKeyRef: { name: o.storeSecret, key: 'password' } } },
                {
                  name: apiKeyEnv,
                  valueFrom: { secretKeyRef: { name: o.storeSecret, key: 'api-key', optional: true } },
                },
              ],
              resources: { requests: { cpu: o.cpu ?? '1', memory: o.memory ?? '2Gi' } },
              securityContext: {
                privileged: false,
                allowPrivilegeEscalation: false,
                capabilities: { drop: ['ALL'] },
                readOnlyRootFilesystem: true,
                procMount: 'Unmasked',
                seccompProfile: { type: 'Unconfined' },
                appArmorProfile: { type: 'Unconfined' },
              },
              volumeMounts: [
                { name: 'runs', mountPath: '/work/.loupe' },
                { name: 'tmp', mountPath: '/tmp' },
                ...(o.dataClaim ? [{ name: 'data', mountPath: o.root!, readOnly: true }] : []),
              ],
            },
          ],
          volumes: [
            { name: 'runs', emptyDir: {} },
            { name: 'tmp', emptyDir: {} },
            ...(o.dataClaim
              ? [{ name: 'data', persistentVolumeClaim: { claimName: o.dataClaim, readOnly: true } }]
              : []),
          ],
        },
      },
    },
  });
  try {
    job.validate();
  } catch (e) {
    throw new LoupeInputError('Job manifest', `kubernetes-models rejects it: ${(e as Error).message}`, { cause: e });
  }
  return job.toJSON() as unknown as Record<string, unknown>;
}

/**
 * Validates a Job manifest (e.g. one read back from a file) with `kubernetes-models`.
 * @param manifest a parsed JSON object. @returns nothing.
 * @throws LoupeInputError (`Job manifest`) with the schema's message when it is not a valid batch/v1 Job.
 */
export function validateJobManifest(manifest: unknown): void {
  const m = manifest as { apiVersion?: unknown; kind?: unknown };
  if (!m || typeof m !== 'object' || m.apiVersion !== 'batch/v1' || m.kind !== 'Job') {
    throw new LoupeInputError('Job manifest', 'is not a batch/v1 Job');
  }
  try {
    new Job(manifest as ConstructorParameters<typeof Job>[0]).validate();
  } catch (e) {
    throw new LoupeInputError('Job manifest', `kubernetes-models rejects it: ${(e as Error).message}`, { cause: e });
  }
}
