#!/usr/bin/env node
// The import agent's entry point: the only module that reads process.env (docs/contributing.md#config-and-logs). Its
// own flags are in config.ts, its wiring in agent.ts; the rest is core's agent skeleton.
import { hostname } from 'node:os';
import { hideBin } from 'yargs/helpers';
import { runAgent } from '@cloudmap-mcs/core/agent';
import { startImportAgent } from './agent.js';
import { importConfigSpec } from './config.js';

await runAgent(
  {
    ...importConfigSpec,
    // The poller decides when to read; caching under it would only delay changes.
    cloudMap: () => ({ cacheTtlMs: { namespaces: 0, services: 0, instances: 0, discover: 0 } }),
    start: startImportAgent,
  },
  {
    argv: hideBin(process.argv),
    env: process.env,
    hostname: hostname(),
    stdoutIsTTY: process.stdout.isTTY,
  },
);
