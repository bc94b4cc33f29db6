import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The repository stands alone (issue 31): no file may send its reader to a document that is
// not in it, or to a path on one machine. What the code relies on is written in docs/ (architecture.md, contributing.md, the
// ADRs). This scans every tracked (and new, not ignored) file and names each offending line.
const root = fileURLToPath(new URL('../..', import.meta.url));

// A Markdown document named in a line: citing one is allowed only if the repository has a file
// of that name, or it is one of the names below. Not preceded by a name character: a longer
// name that ends the same way is another document. No list of outside documents is needed
// (or kept): any name the repository does not hold is one.
const DOC_NAME = /(?<![\w.-])[\w-]+\.md\b/g;
/** Names that are not citations: generated reports, a template, library identifiers. */
const NOT_CITATIONS = new Set([
  'report.md',
  'NNNN-title.md',
  'forge.md',
  'LICENSE.md',
  'License.md',
]);
// A relative path that climbs to a folder the repository does not have (`../<name>`, any
// depth): relative paths in code and lock files climb to the repository's own folders, so a
// name no repository path holds is outside it. The one allowed is the default of the
// MCS_API_UPSTREAM override (the upstream conformance suite's source, read from beside the
// clone), on the line that names the override.
const CLIMB = /(?<![\w.-])(?:\.\.\/)+(\w[\w.-]*)(\/)?/g;
const OVERRIDE = 'MCS_API_UPSTREAM';
// An absolute path on some machine. The toolchain cache (`<home>/.cache/cloudmap-mcs`) is the
// project's own directory, named by the Makefile, so a path into it is allowed.
const MACHINE_PATH =
  /(?<![\w.~/-])\/(?:work|root|home|Users)\/(?![\w.-]*\/?\.cache\/cloudmap-mcs)/g;

/** A name without its extension: `../wait.js` names the source `wait.ts`. */
const stem = (name: string): string => name.replace(/\.[\w]+$/, '');

export interface Citation {
  file: string;
  line: number;
  text: string;
}

/** Every citation of something outside the repository in `content`. `inRepo`: the repo's file names (with and without extension) and folder names (ending in `/`). */
export function outsideCitations(
  file: string,
  content: string,
  inRepo: ReadonlySet<string>,
): Citation[] {
  const found: Citation[] = [];
  content.split('\n').forEach((line, i) => {
    const climbs = line.includes(OVERRIDE) ? [] : [...line.matchAll(CLIMB)];
    const hits = [
      ...[...line.matchAll(DOC_NAME)]
        .map((m) => m[0])
        .filter((name) => !inRepo.has(name) && !NOT_CITATIONS.has(name)),
      ...climbs
        .filter((m) => {
          const name = m[1] ?? '';
          // A climb ending in a slash reaches a folder; a bare one may name a folder or a file.
          return !inRepo.has(`${name}/`) && (m[2] !== undefined || !inRepo.has(stem(name)));
        })
        .map((m) => m[0]),
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

/** The text files of the repository, with their contents. */
function repoTexts(): { file: string; text: string }[] {
  const texts: { file: string; text: string }[] = [];
  for (const file of repoFiles()) {
    const path = join(root, file);
    if (!statSync(path).isFile()) continue;
    const bytes = readFileSync(path);
    if (isText(bytes)) texts.push({ file, text: bytes.toString('utf8') });
  }
  return texts;
}

/** The anchors GitHub gives a Markdown file's headings (`#section`), fenced code skipped. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = fenced ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (m === null) continue;
    const slug = (m[1] ?? '')
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

// `docs/<path>.md` or `docs/<path>.md#<anchor>`, as comments and docs cite the project's docs.
const DOCS_CITATION = /(?<![\w/.-])(docs\/[\w/.-]*\.md)(?:#([\w-]+))?/g;

/** Citations of `docs/….md[#anchor]` in `content` that name no such file or heading. */
export function brokenDocCitations(
  file: string,
  content: string,
  docs: ReadonlyMap<string, ReadonlySet<string>>,
): Citation[] {
  const found: Citation[] = [];
  content.split('\n').forEach((line, i) => {
    for (const m of line.matchAll(DOCS_CITATION)) {
      const [text, doc = '', anchor] = m;
      const anchors = docs.get(doc);
      if (anchors === undefined || (anchor !== undefined && !anchors.has(anchor)))
        found.push({ file, line: i + 1, text });
    }
  });
  return found;
}

describe('the repository stands alone', () => {
  // Built from pieces so that this file does not itself cite anything.
  const cut = (...pieces: string[]): string => pieces.join('');
  const none = new Set<string>();

  it.each([
    ['see ', cut('PLAN', '.md'), ' §6'],
    ['(', cut('notes', '.md'), ' rule 4)'],
    ['(', cut('../', 'team'), ')'],
    ['', cut('/wo', 'rk/'), 'team/x'],
    ['', cut('/ro', 'ot/'), 'notes.txt'],
  ])('flags %s%s%s', (before, text, after) => {
    const content = `first\n${before}${text}${after}\n`;
    const found = outsideCitations('f', content, none).map((c) => c.text);
    expect(found).toContain(text);
  });

  it.each([
    'docs/migrate-from-aws-controller.md step 2',
    'docs/architecture.md#layers',
    'see LICENSE.md of each package',
    `\${MCS_API_UPSTREAM:-${cut('..', '/', 'x')}}`,
    ['cached in /ro', 'ot/.cache/cloudmap-mcs/controlplane'].join(''),
    'under ~/.cache/cloudmap-mcs',
    // A folder named like a machine's top folder, inside a URL or a repository path.
    cut('https://github.com/kubernetes-sigs/mcs-api', '/wo', 'rk/x'),
    cut('packages/core/src', '/wo', 'rk/queue.ts'),
  ])('allows %s', (line) => {
    expect(
      outsideCitations('f', line, new Set(['migrate-from-aws-controller.md', 'architecture.md'])),
    ).toEqual([]);
  });

  it('a relative path is a citation only when it climbs to a folder the repository lacks', () => {
    const up = cut('../', '../', 'wait.js');
    expect(outsideCitations('f', `import '${up}'`, new Set(['wait']))).toEqual([]);
    expect(outsideCitations('f', `see ${up}`, none).map((c) => c.text)).toEqual([up]);
  });

  it('allows a document of that name that is in the repository', () => {
    const name = cut('PLAN', '.md');
    expect(outsideCitations('f', `see ${name}`, new Set([name]))).toEqual([]);
  });

  it('no tracked file cites a document outside the repository', () => {
    const files = repoFiles();
    expect(files.length).toBeGreaterThan(100);
    const names = files.flatMap((f) => {
      const parts = f.split('/');
      const file = parts.pop() ?? '';
      return [file, ...parts.map((p) => `${p}/`)];
    });
    // Basenames for documents, names without extension for relative paths, and the folders
    // the build and the install make (not tracked).
    const inRepo = new Set([...names, ...names.map(stem), 'node_modules/', 'dist/']);
    const found = repoTexts().flatMap(({ file, text }) =>
      outsideCitations(file, text, inRepo).map((c) => `${c.file}:${c.line}: ${c.text}`),
    );
    // Point at the repository's own docs instead: docs/architecture.md, docs/contributing.md,
    // docs/adr/, docs/cloudmap-schema.md.
    expect(found).toEqual([]);
  });
});

describe("citations of the project's own docs resolve", () => {
  // A made-up doc, named from pieces so that these examples are not citations themselves.
  const a = ['docs', 'a'].join('/') + '.md';
  const b = ['docs', 'b'].join('/') + '.md';
  const docs = new Map([
    [a, headingAnchors('# A\n\n## Cost model\n```\n# not a heading\n```\n## Cost model\n')],
  ]);

  it('reads the anchors GitHub gives headings', () => {
    expect([...headingAnchors('# Limits — never truncated\n## 9. Flags (`--x`)\n')]).toEqual([
      'limits--never-truncated',
      '9-flags---x',
    ]);
    expect([...(docs.get(a) ?? [])]).toEqual(['a', 'cost-model', 'cost-model-1']);
  });

  it.each([
    ['see ', b, ''],
    ['(', `${a}#costs`, ')'],
    ['(', `${a}#not-a-heading`, ')'],
  ])('flags %s%s%s', (before, text, after) => {
    const line = `${before}${text}${after}`;
    expect(brokenDocCitations('f', line, docs)).toEqual([{ file: 'f', line: 1, text }]);
  });

  it.each([`see ${a}`, `(${a}#cost-model-1, step 2)`, `x/${b}`])('allows %s', (line) => {
    expect(brokenDocCitations('f', line, docs)).toEqual([]);
  });

  it('every docs/….md[#anchor] cited in the repository names a file and a heading in it', () => {
    const texts = repoTexts();
    const docs = new Map(
      texts
        .filter(({ file }) => file.startsWith('docs/') && file.endsWith('.md'))
        .map(({ file, text }) => [file, headingAnchors(text)] as const),
    );
    expect(docs.size).toBeGreaterThan(20);
    const found = texts.flatMap(({ file, text }) =>
      brokenDocCitations(file, text, docs).map((c) => `${c.file}:${c.line}: ${c.text}`),
    );
    expect(found).toEqual([]);
  });
});
