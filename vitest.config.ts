import { defineConfig } from 'vitest/config';

// One root config, one project per package. Unit tests are `*.test.ts`; suites that need
// real clusters, the emulator or moto are `*.int.test.ts` and run in the `integration`
// project (make test-integration), which shares clusters per run.
const packages = ['core', 'cloudmap-emulator', 'export-agent', 'import-agent', 'cli'];

export default defineConfig({
  resolve: { conditions: ['source'] },
  test: {
    reporters: ['default'],
    // Generous: CI machines have 2 cores and the first ESLint/SDK load can take seconds there.
    testTimeout: 30_000,
    projects: [
      ...packages.map((name) => ({
        extends: true,
        test: {
          name,
          root: `packages/${name}`,
          include: ['test/**/*.test.ts'],
          exclude: ['test/**/*.int.test.ts'],
        },
      })),
      {
        extends: true,
        test: {
          name: 'tooling',
          root: '.',
          include: ['tools/test/**/*.test.ts', 'e2e/test/**/*.test.ts'],
          exclude: ['**/*.int.test.ts'],
        },
      },
      {
        // deploy/: the Helm chart, kustomize, IAM and image tests (helm is built from the Go
        // module proxy on first use and cached, hence the long hook timeout).
        extends: true,
        test: {
          name: 'deploy',
          root: '.',
          include: ['deploy/test/**/*.test.ts'],
          exclude: ['deploy/test/**/*.int.test.ts', 'deploy/test/**/*.promtool.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 1_200_000,
        },
      },
      {
        // The chart's alert rules and dashboard under promtool (built from the Go module proxy,
        // ~6 min cold, 12 at load): run after the integration suite (make test-integration),
        // by which time .ci/run's background build has it; no clusters.
        extends: true,
        test: {
          name: 'promtool',
          root: '.',
          include: ['deploy/test/**/*.promtool.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 1_800_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          root: '.',
          include: [
            'packages/*/test/**/*.int.test.ts',
            'e2e/test/**/*.int.test.ts',
            'deploy/test/**/*.int.test.ts',
          ],
          exclude: ['e2e/test/realnodes/**', 'e2e/test/migration/**'],
          // One clusterset (2 clusters + Cloud Map emulator) per run; see docs/harness.md.
          globalSetup: ['e2e/src/vitest/global-setup.ts'],
          testTimeout: 180_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
      {
        // Real nodes (kubelet, containerd, kube-proxy, CoreDNS; root): pods run, DNS answers,
        // traffic flows. Fails, never skips, when real nodes cannot start. docs/harness.md.
        extends: true,
        test: {
          name: 'realnodes',
          root: '.',
          include: ['e2e/test/realnodes/**/*.int.test.ts'],
          globalSetup: ['e2e/src/vitest/global-setup-real.ts'],
          testTimeout: 180_000,
          hookTimeout: 900_000,
          fileParallelism: false,
        },
      },
      {
        // The migration from the AWS controller on real nodes, with the doc's commands
        // (issue 35; make test-migration): its own clusters, after the realnodes suites.
        extends: true,
        test: {
          name: 'migration',
          root: '.',
          include: ['e2e/test/migration/**/*.int.test.ts'],
          globalSetup: ['e2e/src/vitest/global-setup-real.ts'],
          testTimeout: 900_000,
          hookTimeout: 900_000,
          fileParallelism: false,
        },
      },
    ],
  },
  ssr: { resolve: { conditions: ['source'], externalConditions: ['source'] } },
});
