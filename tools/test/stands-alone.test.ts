import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The repository stands alone (issue 31): no file may send its reader to a document that is
// not in it — the team's design and guide pages, their reference notes, or a path on one
// machine. What the code relies on is written in docs/ (architecture.md, contributing.md, the
// ADRs). This scans every tracked (and new, not ignored) file and names each offending line.
const root = fileURLToPath(new URL('../..', import.meta.url));

/** Documents that live outside the repository; citing one is allowed only if the repo has a file of that name. */
const OUTSIDE_DOCS = [
  'DESIGN',
  'GUIDE',
  'aws-controller',
  'cloudmap-api',
  'mcs-api',
  'performance-facts',
  'test-infra',
  'real-nodes-spike',
  'images-without-docker',
];
// Not preceded by a name character: a longer name that ends the same way (docs/migrate-from-…)
// is another document.
const DOC_NAME = new RegExp(`(?<![\\w.-])(?:${OUTSIDE_DOCS.join('|')})\\.md\\b`, 'gi');
// The team's shared folder beside the clone. `../shared/upstream/` is allowed: it is the default
// of the MCS_API_UPSTREAM override where the upstream conformance suite's source is read from.
const SHARED_DIR = /(?:\.\.\/shared\/(?!upstream\/)|(?<![\w-])shared\/reference\/)/g;
// An absolute path on some machine. The toolchain cache (`<home>/.cache/cloudmap-mcs`) is the
// project's own directory, named by the Makefile, so a path into it is allowed.
const MACHINE_PATH =
  /(?<![\w.~/-])\/(?:work|root|home|Users)\/(?![\w.-]*\/?\.cache\/cloudmap-mcs)/g;

export interface Citation {
  file: string;
  line: number;
  text: string;
}

/** Every citation of something outside the repository in `content`. `inRepo`: basenames of the repo's files. */
export function outsideCitations(
  file: string,
  content: string,
  inRepo: ReadonlySet<string>,
): Citation[] {
  const found: Citation[] = [];
  content.split('\n').forEach((line, i) => {
    const hits = [
      ...[...line.matchAll(DOC_NAME)].map((m) => m[0]).filter((name) => !inRepo.has(name)),
      ...[...line.matchAll(SHARED_DIR)].map((m) => m[0]),
      ...[...line.matchAll(MACHINE_PATH)].map((m) => m[0]),
    ];
    for (const text of hits) found.push({ file, line: i + 1, text });
  });
  return found;
}

function repoFiles(): string[] {
  const out = execFileSync(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return out.split('\0').filter((f) => f !== '' && existsSync(join(root, f)));
}

function isText(bytes: Buffer): boolean {
  return !bytes.subarray(0, 8000).includes(0);
}

describe('the repository stands alone', () => {
  // Built from pieces so that this file does not itself cite anything.
  const cut = (...pieces: string[]): string => pieces.join('');
  const none = new Set<string>();

  it.each([
    ['see ', cut('DESIGN', '.md'), ' §6'],
    ['(', cut('GUIDE', '.md'), ' rule 4)'],
    ['fixed in ', cut('aws-controller', '.md'), ' §9.1'],
    ['(', cut('../', 'shared/'), 'reference/x.md)'],
    ['(', cut('shared/', 'reference/'), 'x.md)'],
    ['', cut('/wo', 'rk/'), 'shared/x'],
    ['', cut('/ro', 'ot/'), 'notes.txt'],
  ])('flags %s%s%s', (before, text, after) => {
    const content = `first\n${before}${text}${after}\n`;
    expect(outsideCitations('f', content, none)).toEqual([{ file: 'f', line: 2, text }]);
  });

  it.each([
    'docs/migrate-from-aws-controller.md step 2',
    'docs/architecture.md#layers',
    '${MCS_API_UPSTREAM:-../shared/upstream/mcs-api}',
    'cached in /root/.cache/cloudmap-mcs/controlplane',
    'under ~/.cache/cloudmap-mcs',
    'https://github.com/kubernetes-sigs/mcs-api/work/x',
    'packages/core/src/work/queue.ts',
  ])('allows %s', (line) => {
    expect(outsideCitations('f', line, none)).toEqual([]);
  });

  it('allows a document of that name that is in the repository', () => {
    const name = cut('GUIDE', '.md');
    expect(outsideCitations('f', `see ${name}`, new Set([name]))).toEqual([]);
  });

  it('no tracked file cites a document outside the repository', () => {
    const files = repoFiles();
    expect(files.length).toBeGreaterThan(100);
    const inRepo = new Set(files.map((f) => basename(f)));
    const found: string[] = [];
    for (const file of files) {
      const path = join(root, file);
      if (!statSync(path).isFile()) continue;
      const bytes = readFileSync(path);
      if (!isText(bytes)) continue;
      for (const c of outsideCitations(file, bytes.toString('utf8'), inRepo))
        found.push(`${c.file}:${c.line}: ${c.text}`);
    }
    // Point at the repository's own docs instead: docs/architecture.md, docs/contributing.md,
    // docs/adr/, docs/cloudmap-schema.md.
    expect(found).toEqual([]);
  });
});
