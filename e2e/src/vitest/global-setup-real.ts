// Vitest globalSetup of the `realnodes` project: like the integration project's, but the
// clusters always run real nodes (MCS_E2E_NODES=real). When the machine cannot start them
// (not root, packages missing and not installable, a component failing), the run FAILS
// with the reason: a requested real-node run never turns into a skipped one.
import type { TestProject } from 'vitest/node';
import { setupClusterset } from './global-setup.js';

export default function setup(project: TestProject): ReturnType<typeof setupClusterset> {
  return setupClusterset(project, { ...process.env, MCS_E2E_NODES: 'real' });
}
