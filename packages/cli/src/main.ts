#!/usr/bin/env node
/**
 * `cloudmap-mcs`: status, doctor, gather and version for the clusters of a Cloud Map
 * clusterset. The only module that reads process.env: AWS_REGION / AWS_DEFAULT_REGION and
 * AWS_ENDPOINT_URL_SERVICEDISCOVERY / AWS_ENDPOINT_URL, each overridable by a flag, and
 * AWS_ENDPOINT_URL_SERVICEDISCOVERY_DATA (as the agents read it).
 */
import { writeFileSync } from 'node:fs';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { openCloudMap, roleOpener, type AwsArgs } from './aws.js';
import type { CloudMapAccess, CommandIo, OutputFormat } from './commands.js';
import { doctorCommand, serialize, statusCommand } from './commands.js';
import { gatherCommand } from './gather/command.js';
import { createGatherReader } from './kube/gather-reader.js';
import { createKubeReader, loadKubeConfig } from './kube/reader.js';
import { cliVersion } from './version.js';

interface GlobalArgs extends AwsArgs {
  kubeconfig: string | undefined;
  context: string[];
  allContexts: boolean;
  output: OutputFormat;
}

const env = process.env;
const io: CommandIo = { write: (t) => process.stdout.write(t), now: () => Date.now() };
const VERSION = cliVersion();

async function run(
  args: GlobalArgs,
  command: (access: CloudMapAccess | undefined) => Promise<number>,
): Promise<void> {
  const cm = openCloudMap(withDataEndpoint(args));
  try {
    process.exitCode = await command(cm?.access);
  } finally {
    await cm?.close();
  }
}

/** The data endpoint of a VPC endpoint without private DNS, from the agents' variable. */
const withDataEndpoint = (args: AwsArgs): AwsArgs => ({
  region: args.region,
  cloudmapEndpoint: args.cloudmapEndpoint,
  cloudmapDataEndpoint: env['AWS_ENDPOINT_URL_SERVICEDISCOVERY_DATA'],
});

/** The one context of a single-cluster command (doctor, gather). */
function kubeConfig(args: GlobalArgs) {
  if (args.allContexts || args.context.length > 1)
    throw new Error('this command looks at one context: pass --context once');
  return loadKubeConfig({ kubeconfig: args.kubeconfig, context: args.context[0] });
}

/** The contexts of `status`: the --context flags, every context, or the current one. */
function kubes(args: GlobalArgs) {
  if (args.allContexts && args.context.length > 0)
    throw new Error('pass either --context or --all-contexts');
  const base = loadKubeConfig({ kubeconfig: args.kubeconfig, context: args.context[0] });
  const names = args.allContexts ? base.getContexts().map((c) => c.name) : args.context;
  if (names.length <= 1) return [createKubeReader(base)];
  return names.map((context) =>
    createKubeReader(loadKubeConfig({ kubeconfig: args.kubeconfig, context })),
  );
}

await yargs(hideBin(process.argv))
  .scriptName('cloudmap-mcs')
  .usage('$0 <command> [options]\n\nInspect the clusters of a Cloud Map MCS clusterset.')
  .version(VERSION)
  .option('kubeconfig', {
    type: 'string',
    describe: 'kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)',
  })
  .option('context', {
    type: 'string',
    array: true,
    default: [] as string[],
    describe: 'kubeconfig context (default: current); status takes several for one clusterset view',
  })
  .option('all-contexts', {
    type: 'boolean',
    default: false,
    describe: 'status: every context of the kubeconfig, as one clusterset view',
  })
  .option('region', {
    type: 'string',
    describe: 'AWS region of Cloud Map',
    default: env['AWS_REGION'] ?? env['AWS_DEFAULT_REGION'],
    defaultDescription: '$AWS_REGION',
  })
  .option('cloudmap-endpoint', {
    type: 'string',
    describe:
      'Cloud Map endpoint URL: https (a VPC or FIPS endpoint; DiscoverInstances on its data- host) or http (a local emulator)',
    default: env['AWS_ENDPOINT_URL_SERVICEDISCOVERY'] ?? env['AWS_ENDPOINT_URL'],
    defaultDescription: '$AWS_ENDPOINT_URL_SERVICEDISCOVERY',
  })
  .option('output', {
    alias: 'o',
    choices: ['table', 'json', 'yaml'] as const,
    default: 'table' as OutputFormat,
    describe: 'output format',
  })
  .command(
    'status',
    'ServiceExports and ServiceImports with their conditions, the Cloud Map records, and the drift between them; exits 1 on drift or a missing import',
    (y) =>
      y.option('namespace', {
        alias: 'n',
        type: 'string',
        describe: 'only this namespace (default: every namespace)',
      }),
    (args) =>
      run(args, (cm) =>
        statusCommand(kubes(args), cm, { output: args.output, namespace: args.namespace }, io),
      ),
  )
  .command(
    'doctor',
    "Check the prerequisites (CRDs, ClusterProperties, Cloud Map access as each agent's role, the agents' leaders, CoreDNS) and say how to fix each; exits 1 when one fails",
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
        })
        .option('export-role-arn', {
          type: 'string',
          describe:
            "probe Cloud Map as this role for the export agent (default: the agent's assumeRoleArn, then its ServiceAccount's IRSA annotation)",
        })
        .option('import-role-arn', {
          type: 'string',
          describe: 'the same for the import agent',
        }),
    (args) => {
      const [namespace = 'kube-system', configMap = 'coredns'] = args.corednsConfigmap.split('/');
      const agentUrls = args.agentsUrl.flatMap((u) => u.split(',')).filter((u) => u !== '');
      const roles = roleOpener(withDataEndpoint(args));
      return run(args, (cm) =>
        doctorCommand(
          createKubeReader(kubeConfig(args)),
          cm,
          {
            agentUrls,
            coredns: { namespace, configMap },
            roleArns: {
              ...(args.exportRoleArn === undefined ? {} : { export: args.exportRoleArn }),
              ...(args.importRoleArn === undefined ? {} : { import: args.importRoleArn }),
            },
            actAs: roles.actAs,
          },
          args.output,
          io,
        ).finally(roles.closeAll),
      );
    },
  )
  .command(
    'gather',
    "Write a support bundle (.tar.gz): the agents' logs and metrics, the MCS objects, one service's Cloud Map records, the doctor's findings; never a Secret",
    (y) =>
      y
        .option('file', {
          alias: 'f',
          type: 'string',
          describe: 'where to write the bundle (default: cloudmap-mcs-gather-<time>.tar.gz)',
        })
        .option('namespace', {
          alias: 'n',
          type: 'string',
          describe: 'MCS objects of this namespace only (default: every namespace)',
        })
        .option('service', {
          type: 'string',
          describe: 'namespace/name of a service whose Cloud Map records to include',
        })
        .option('tail', {
          type: 'number',
          default: 2000,
          describe: 'log lines per agent container',
        }),
    (args) => {
      const kc = kubeConfig(args);
      const [ns, name] = (args.service ?? '').split('/');
      if (args.service !== undefined && (ns === undefined || name === undefined || name === ''))
        throw new Error('--service takes namespace/name');
      return run(args, (cm) =>
        gatherCommand(
          {
            kube: createKubeReader(kc),
            reader: createGatherReader(kc),
            cloudMap: cm,
            namespace: args.namespace,
            service: ns === undefined || name === undefined ? undefined : { namespace: ns, name },
            tailLines: args.tail,
            version: VERSION,
            file: args.file,
          },
          { ...io, writeFile: (path, data) => writeFileSync(path, data, { mode: 0o600 }) },
        ),
      );
    },
  )
  .command(
    'version',
    'Print the version',
    (y) => y,
    (args) => io.write(serialize({ version: VERSION }, args.output) ?? `${VERSION}\n`),
  )
  .demandCommand(1, 'name a command: status, doctor, gather or version')
  .strict()
  .help()
  .fail((msg, err) => {
    const text = err instanceof Error ? err.message : `${msg} (see cloudmap-mcs --help)`;
    process.stderr.write(`cloudmap-mcs: ${text}\n`);
    process.exit(2);
  })
  .parseAsync();
