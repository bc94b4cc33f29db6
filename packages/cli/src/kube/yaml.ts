/** YAML rendering through the js-yaml that @kubernetes/client-node already carries. */
import { dumpYaml } from '@kubernetes/client-node';

/** Through JSON first: drops undefined fields and turns Dates into strings, as -o json does. */
export const toYaml = (value: unknown): string =>
  dumpYaml(JSON.parse(JSON.stringify(value)), { noRefs: true });
