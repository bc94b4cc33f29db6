#!/usr/bin/env node
/**
 * `cloudmap-mcs`: status and doctor for a cluster of a Cloud Map clusterset. The only module
 * that reads process.env: AWS_REGION / AWS_DEFAULT_REGION and
 * AWS_ENDPOINT_URL_SERVICEDISCOVERY / AWS_ENDPOINT_URL, each overridable by a flag.
 */
import {
  createCloudMapClient,
  createSdkCloudMapPort,
  createServiceDiscoveryClient,
} from '@cloudmap-mcs/core/cloudmap';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import type { CloudMapAccess, CommandIo, OutputFormat } from './commands.js';
import { doctorCommand, statusCommand } from './commands.js';
import { createKubeReader, loadKubeConfig } from './kube/reader.js';

interface GlobalArgs {
  kubeconfig: string | undefined;
  context: string | undefined;
  region: string | undefined;
  cloudmapEndpoint: string | undefined;
  output: OutputFormat;
}

const env = process.env;
const io: CommandIo = { write: (t) => process.stdout.write(t), now: () => Date.now() };

/** Cloud Map through the core client (retries, rate limits), caches off: one read per call. */
function cloudMapAccess(args: GlobalArgs) {
  const endpoint = args.cloudmapEndpoint;
  const region = args.region ?? (endpoint === undefined ? undefined : 'us-east-1');
  if (region === undefined) return undefined;
  const sdk = createServiceDiscoveryClient({
    region,
    ...(endpoint === undefined ? {} : { endpoint }),
  });
  const client = createCloudMapClient(createSdkCloudMapPort(sdk), {
    retry: { maxAttempts: 3 },
    cacheTtlMs: { namespaces: 0, services: 0, instances: 0, discover: 0 },
  });
  const access: CloudMapAccess = {
    port: client,
    endpoint: endpoint ?? `AWS Cloud Map in ${region}`,
  };
  return { access, close: () => client.close().finally(() => sdk.destroy()) };
}

async function run(
  args: GlobalArgs,
  command: (access: CloudMapAccess | undefined) => Promise<number>,
): Promise<void> {
  const cm = cloudMapAccess(args);
  try {
    process.exitCode = await command(cm?.access);
  } finally {
    await cm?.close();
  }
}

function kube(args: GlobalArgs) {
  return createKubeReader(loadKubeConfig({ kubeconfig: args.kubeconfig, context: args.context }));
}

await yargs(hideBin(process.argv))
  .scriptName('cloudmap-mcs')
  .usage('$0 <command> [options]\n\nInspect a cluster of a Cloud Map MCS clusterset.')
  .option('kubeconfig', {
    type: 'string',
    describe: 'kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)',
  })
  .option('context', { type: 'string', describe: 'kubeconfig context (default: current)' })
  .option('region', {
    type: 'string',
    describe: 'AWS region of Cloud Map',
    default: env['AWS_REGION'] ?? env['AWS_DEFAULT_REGION'],
    defaultDescription: '$AWS_REGION',
  })
  .option('cloudmap-endpoint', {
    type: 'string',
    describe: 'Cloud Map endpoint URL (an emulator)',
    default: env['AWS_ENDPOINT_URL_SERVICEDISCOVERY'] ?? env['AWS_ENDPOINT_URL'],
    defaultDescription: '$AWS_ENDPOINT_URL_SERVICEDISCOVERY',
  })
  .option('output', {
    alias: 'o',
    choices: ['table', 'json'] as const,
    default: 'table' as OutputFormat,
    describe: 'output format',
  })
  .command(
    'status',
    'ServiceExports and their conditions, ServiceImports, the Cloud Map records of the clusterset, and the drift between them',
    (y) => y,
    (args) => run(args, (cm) => statusCommand(kube(args), cm, args.output, io)),
  )
  .command(
    'doctor',
    'Check the prerequisites (CRDs, ClusterProperties, Cloud Map access, agents, CoreDNS) and say how to fix each; exits 1 when one fails',
    (y) =>
      y
        .option('agents-url', {
          type: 'string',
          array: true,
          default: [] as string[],
          describe:
            'health endpoint base URL of an agent run as a local process (repeatable; GET <url>/readyz)',
        })
        .option('coredns-configmap', {
          type: 'string',
          default: 'kube-system/coredns',
          describe: 'namespace/name of the ConfigMap holding the Corefile',
        }),
    (args) => {
      const [namespace = 'kube-system', configMap = 'coredns'] = args.corednsConfigmap.split('/');
      const agentUrls = args.agentsUrl.flatMap((u) => u.split(',')).filter((u) => u !== '');
      return run(args, (cm) =>
        doctorCommand(
          kube(args),
          cm,
          { agentUrls, coredns: { namespace, configMap } },
          args.output,
          io,
        ),
      );
    },
  )
  .demandCommand(1, 'name a command: status or doctor')
  .strict()
  .help()
  .fail((msg, err) => {
    const text = err instanceof Error ? err.message : `${msg} (see cloudmap-mcs --help)`;
    process.stderr.write(`cloudmap-mcs: ${text}\n`);
    process.exit(2);
  })
  .parseAsync();
