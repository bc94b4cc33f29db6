#!/usr/bin/env node
// The export agent's entry point: the only module that reads process.env (DESIGN.md §6).
import { hideBin } from 'yargs/helpers';
import { createLogger, createShutdown } from '@cloudmap-mcs/core/runtime';
import { ConfigError, parseConfig } from './config.js';
import { runExportAgent, StartupError } from './agent.js';

const argv = hideBin(process.argv);
const config = await parseConfig(argv, process.env).catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`cloudmap-mcs-export-agent: ${error.message}\n`);
    process.exit(2);
  }
  throw error;
});
// yargs printed the help or version; nothing to run.
if (argv.includes('--help') || argv.includes('--version')) process.exit(0);
const logger = createLogger({ level: config.logLevel, defaultFields: { agent: 'export-agent' } });
logger.info('configuration', { config });
const shutdown = createShutdown({ logger });
try {
  await runExportAgent(
    config,
    { endpointFromEnv: process.env['AWS_ENDPOINT_URL_SERVICEDISCOVERY'] },
    logger,
    shutdown,
  );
} catch (error) {
  if (error instanceof StartupError) {
    logger.error('cannot start', { reason: error.message });
    process.stderr.write(`cloudmap-mcs-export-agent: ${error.message}\n`);
    process.exit(2);
  }
  if (!shutdown.signal.aborted) {
    logger.error('export agent failed', { err: error });
    process.exit(1);
  }
}
