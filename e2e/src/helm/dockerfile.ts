/**
 * What the runtime (last) stage of Dockerfile.export / Dockerfile.import says about the image:
 * the facts the locally built images are checked against (e2e/test/realnodes/agent-images).
 */
export interface DockerfileFacts {
  user: string;
  entrypoint: string[];
  workdir: string;
  expose: string[];
  env: string[];
  /** The runtime stage's COPY --from=build <src> <dest>. */
  copy: { src: string; dest: string };
}

/** The runtime (last) stage of a Dockerfile, as far as the image config and /app go. */
export function dockerfileFacts(text: string): DockerfileFacts {
  const stages = text.split(/^FROM\s/m);
  const last = stages[stages.length - 1]!;
  const line = (instr: string) =>
    [...last.matchAll(new RegExp(`^${instr}\\s+(.+)$`, 'gm'))].map((m) => m[1]!.trim());
  const copy = /^COPY\s+--from=build(?:\s+--chown=\S+)?\s+(\S+)\s+(\S+)$/m.exec(last);
  if (!copy) throw new Error('the runtime stage has no COPY --from=build');
  return {
    user: line('USER').at(-1) ?? '',
    entrypoint: JSON.parse(line('ENTRYPOINT').at(-1) ?? '[]') as string[],
    workdir: line('WORKDIR').at(-1) ?? '',
    expose: line('EXPOSE').flatMap((l) => l.split(/\s+/)),
    env: line('ENV'),
    copy: { src: copy[1]!, dest: copy[2]! },
  };
}
