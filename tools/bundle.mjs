// @ts-check
// Bundles each agent into one ESM file: packages/<agent>/dist/bundle/main.mjs (+ .map and the
// licence texts of what it contains). `make build` runs it after `tsc --build`; every launcher
// (harness, demo, chaos, bench, conformance, the agents' process tests) and the images run
// the bundle, while unit tests keep importing the unbundled dist.
//
// Why: @kubernetes/client-node 2.0.1 has no `exports` map and every entry point reaches its
// whole generated API (1,033 files); loading that module graph costs ~85 MiB of RSS in every
// agent before it caches anything. One tree-shaken file costs a third of that
// (docs/adr/0016-agent-memory.md, docs/benchmarks.md).
//
// Input is the compiled JavaScript that the tests run (dist/src/main.js, with tsc's source
// maps), so the bundle is the tested code; esbuild follows those maps, so the bundle's map
// points at the .ts sources. Run with `node --enable-source-maps` for TypeScript stack traces.
//
// Usage: node tools/bundle.mjs [export-agent|import-agent ...]   (default: both)
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { ownCodeOnly } from './own-source-map.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const agents = process.argv.slice(2);
const all = ['export-agent', 'import-agent'];
for (const a of agents)
  if (!all.includes(a)) throw new Error(`bundle: unknown agent "${a}" (${all.join(', ')})`);

/** The package directory (…/node_modules/<name> or …/node_modules/@scope/<name>) of an input. */
function packageDirOf(input) {
  const parts = input.split(/[\\/]/);
  const i = parts.lastIndexOf('node_modules');
  if (i < 0) return undefined;
  const n = parts[i + 1]?.startsWith('@') ? 2 : 1;
  return parts.slice(0, i + 1 + n).join(sep);
}

/**
 * The licence texts of every third-party package whose code went into the bundle: bundling
 * drops the package directories (and their LICENSE files) that `pnpm deploy` used to ship.
 */
function notices(metafile) {
  const dirs = new Set();
  for (const input of Object.keys(metafile.inputs)) {
    const dir = packageDirOf(join(root, input));
    if (dir !== undefined) dirs.add(dir);
  }
  const out = [];
  for (const dir of [...dirs].sort()) {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const file = ['LICENSE', 'LICENSE.md', 'LICENSE.txt', 'license', 'LICENCE', 'License.md']
      .map((f) => join(dir, f))
      .find((f) => existsSync(f));
    const text =
      file === undefined ? '(no licence file in the package)' : readFileSync(file, 'utf8');
    out.push(`${pkg.name}@${pkg.version} (${pkg.license ?? 'see text'})\n\n${text.trim()}\n`);
  }
  return out.join(`\n${'-'.repeat(78)}\n\n`);
}

for (const agent of agents.length > 0 ? agents : all) {
  const pkg = join(root, 'packages', agent);
  const entry = join(pkg, 'dist', 'src', 'main.js');
  if (!existsSync(entry))
    throw new Error(`bundle: ${relative(root, entry)} is missing (run tsc --build first)`);
  const outfile = join(pkg, 'dist', 'bundle', 'main.mjs');
  const result = await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    minify: true,
    // Class and function names stay readable in logs (`err.name`, `constructor.name`).
    keepNames: true,
    sourcemap: 'linked',
    // The map only needs the positions: stack traces name the .ts file and line without
    // embedding the sources (a smaller file, and less to parse at start). It is cut down
    // to our own code when written (own-source-map.mjs): Node keeps a parsed map for the
    // life of the process, and the full one costs ~60 MiB of heap.
    sourcesContent: false,
    legalComments: 'none',
    metafile: true,
    write: false,
    logLevel: 'warning',
    // Some dependencies are CommonJS and call require() for Node built-ins; an ESM bundle
    // has no `require` of its own.
    banner: {
      js: "import { createRequire as __cmcsCreateRequire } from 'node:module'; const require = __cmcsCreateRequire(import.meta.url);",
    },
  });
  // Each file is written whole and renamed into place: two test files that start agents at
  // once may both rebuild a stale bundle (e2e/src/agent-bundle.ts), and neither may see half.
  const put = (file, data) => {
    mkdirSync(dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, data);
    renameSync(tmp, file);
  };
  for (const f of result.outputFiles)
    if (f.path.endsWith('.map')) put(f.path, JSON.stringify(ownCodeOnly(JSON.parse(f.text))));
    else if (f.path !== outfile) put(f.path, f.contents);
  put(join(pkg, 'dist', 'bundle', 'THIRD-PARTY-NOTICES.txt'), notices(result.metafile));
  // The bundle last: its time stamp says the whole set is current.
  put(outfile, result.outputFiles.find((f) => f.path === outfile).contents);
  const bytes = result.metafile.outputs[relative(root, outfile)]?.bytes ?? 0;
  process.stderr.write(
    `bundle: ${relative(root, outfile)} (${(bytes / 2 ** 20).toFixed(1)} MiB)\n`,
  );
}
