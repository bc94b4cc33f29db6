#!/usr/bin/env node
// The export agent's entry point: the only module that reads process.env (docs/contributing.md#config-and-logs). Its
// own flags are in config.ts, its wiring in agent.ts; the rest is core's agent skeleton.
import { hostname } from 'node:os';
import { hideBin } from 'yargs/helpers';
import { runAgent } from '@cloudmap-mcs/core/agent';
import { checkCrds, startExportAgent } from './agent.js';
import { exportConfigSpec } from './config.js';

await runAgent(
  {
    ...exportConfigSpec,
    // The write path is the throttled one: RegisterInstance/DeregisterInstance at --register-rate.
    cloudMap: (config) => {
      const writes = {
        perSecond: config.registerRatePerSecond,
        burst: config.registerRatePerSecond * 2,
      };
      // Every write is one operation to confirm with GetOperation: tracking slower than writing
      // would leave a growing backlog (a 2,500-instance export Pending for minutes).
      const confirms = {
        perSecond: Math.max(20, writes.perSecond),
        burst: Math.max(40, writes.burst),
      };
      return {
        rateLimits: {
          registerInstance: writes,
          deregisterInstance: writes,
          getOperation: confirms,
        },
      };
    },
    preflight: checkCrds,
    start: startExportAgent,
  },
  {
    argv: hideBin(process.argv),
    env: process.env,
    hostname: hostname(),
    stdoutIsTTY: process.stdout.isTTY,
  },
);
