/** `cloudmap-mcs gather`: the support bundle, written as a .tar.gz. */
import type { CloudMapAccess, CommandIo } from '../commands.js';
import { fetchReadyz } from '../commands.js';
import { runDoctor } from '../doctor/run.js';
import type { GatherReader } from '../kube/gather-reader.js';
import type { KubeReader } from '../kube/reader.js';
import { gatherBundle } from './collect.js';
import { tarGz } from './tar.js';

export interface GatherOptions {
  kube: KubeReader;
  reader: GatherReader;
  cloudMap: CloudMapAccess | undefined;
  namespace?: string | undefined;
  service?: { namespace: string; name: string } | undefined;
  tailLines: number;
  version: string;
  /** Default: cloudmap-mcs-gather-<time>.tar.gz in the working directory. */
  file?: string | undefined;
}

export interface GatherIo extends CommandIo {
  writeFile: (path: string, data: Uint8Array) => void;
}

/** Writes the bundle; exit code 0 once written (unreadable parts are listed in errors.txt). */
export async function gatherCommand(options: GatherOptions, io: GatherIo): Promise<number> {
  const entries = await gatherBundle({
    kube: options.kube,
    reader: options.reader,
    cloudMap: options.cloudMap,
    // Doctor with the operator's credentials only: a bundle never assumes roles.
    doctor: () =>
      runDoctor({
        kube: options.kube,
        cloudMap: options.cloudMap,
        agentUrls: [],
        coredns: { namespace: 'kube-system', configMap: 'coredns' },
        fetchReadyz,
        now: io.now,
      }),
    namespace: options.namespace,
    service: options.service,
    tailLines: options.tailLines,
    version: options.version,
    now: io.now,
  });
  const stamp = new Date(io.now()).toISOString().replace(/[:.]/g, '-');
  const file = options.file ?? `cloudmap-mcs-gather-${stamp}.tar.gz`;
  io.writeFile(file, tarGz(entries, io.now()));
  const errors = entries.find((e) => e.name.endsWith('/errors.txt'))?.content;
  const failed =
    typeof errors === 'string' && errors !== 'none\n' ? errors.split('\n').length - 1 : 0;
  io.write(
    `wrote ${file} (${entries.length} files${failed > 0 ? `; ${failed} part(s) could not be read, see errors.txt` : ''})\n`,
  );
  return 0;
}
