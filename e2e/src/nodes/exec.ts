import { Writable } from 'node:stream';
import { Exec, type KubeConfig, type V1Status } from '@kubernetes/client-node';

export interface ExecResult {
  readonly stdout: string;
  readonly stderr: string;
  /** 0 on success; the command's exit code otherwise (-1 when the status carried none). */
  readonly code: number;
}

const collector = (): { stream: Writable; text: () => string } => {
  const chunks: Buffer[] = [];
  return {
    stream: new Writable({
      write(chunk: Buffer, _enc, done) {
        chunks.push(chunk);
        done();
      },
    }),
    text: () => Buffer.concat(chunks).toString('utf8'),
  };
};

function exitCode(status: V1Status): number {
  if (status.status === 'Success') return 0;
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
  return cause?.message !== undefined ? Number(cause.message) : -1;
}

/**
 * Runs a command in a pod's container through the API server (pods/exec; on real nodes it
 * reaches the kubelet through the node's CONNECT proxy) and collects its output.
 */
export function execInPod(
  kc: KubeConfig,
  target: { namespace: string; pod: string; container: string },
  command: readonly string[],
  timeoutMs = 30_000,
): Promise<ExecResult> {
  const out = collector();
  const err = collector();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`exec ${command.join(' ')} in ${target.pod} timed out`)),
      timeoutMs,
    );
    new Exec(kc)
      .exec(
        target.namespace,
        target.pod,
        target.container,
        [...command],
        out.stream,
        err.stream,
        null,
        false,
        (status) => {
          clearTimeout(timer);
          // Let the last frames reach the collectors.
          setImmediate(() =>
            resolve({ stdout: out.text(), stderr: err.text(), code: exitCode(status) }),
          );
        },
      )
      .catch((e: unknown) => {
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      });
  });
}
