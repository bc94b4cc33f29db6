// The agent skeleton (`@cloudmap-mcs/core/agent`): composes the Kubernetes runtime and the
// Cloud Map adapter into what both agents run on.
export * from './config.js';
export * from './redact.js';
export * from './run-agent.js';
export * from './environment.js';
export * from './agent-metrics.js';
