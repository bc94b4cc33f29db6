// Which Cloud Map (and STS) API actions each agent can cause, derived from the code with the
// TypeScript compiler rather than from a hand-written list:
//   1. the CloudMapPort methods the agent's own sources call (type-checked member accesses);
//   2. plus what the shared client adds on its own (createCloudMapClient tracks asynchronous
//      operations with getOperation);
//   3. mapped to SDK commands through createSdkCloudMapPort (`new XCommand` / `paginateX`),
//      which name the IAM actions (servicediscovery:X).
import { join } from 'node:path';
import ts from 'typescript';
import { repoRoot } from './helm.js';

const coreCloudmap = join(repoRoot, 'packages', 'core', 'src', 'cloudmap');

export interface AgentUsage {
  /** Port methods called from the agent's sources, with one call site each (for messages). */
  readonly portMethods: Map<string, string>;
  /** Places where a CloudMapPort value leaves the agent's code (would hide calls). */
  readonly escapes: string[];
}

const isPortMember = (symbol: ts.Symbol | undefined): boolean =>
  (symbol?.declarations ?? []).some((d) => {
    const parent = d.parent;
    return (
      ts.isInterfaceDeclaration(parent) &&
      parent.name.text === 'CloudMapPort' &&
      /ports[\\/]cloudmap-port\.(d\.)?ts$/.test(d.getSourceFile().fileName)
    );
  });

const isPortType = (type: ts.Type): boolean => {
  const props = new Set(type.getProperties().map((p) => p.name));
  return ['discoverInstances', 'registerInstance', 'listNamespaces', 'getOperation'].every((m) =>
    props.has(m),
  );
};

/** The CloudMapPort methods an agent package's sources (src/, not tests) call. */
export function agentUsage(agent: 'export-agent' | 'import-agent'): AgentUsage {
  const dir = join(repoRoot, 'packages', agent);
  const configPath = join(dir, 'tsconfig.json');
  const parsed = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (parsed === undefined) throw new Error(`cannot read ${configPath}`);
  const program = ts.createProgram({
    rootNames: parsed.fileNames,
    options: parsed.options,
    ...(parsed.projectReferences === undefined
      ? {}
      : { projectReferences: parsed.projectReferences }),
  });
  const checker = program.getTypeChecker();
  const portMethods = new Map<string, string>();
  const escapes: string[] = [];
  const srcDir = join(dir, 'src');
  for (const sf of program.getSourceFiles()) {
    if (!sf.fileName.startsWith(srcDir)) continue;
    const where = (n: ts.Node): string =>
      `${sf.fileName.slice(repoRoot.length + 1)}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1}`;
    const visit = (node: ts.Node): void => {
      if (ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node)) {
        const symbol = checker.getSymbolAtLocation(
          ts.isPropertyAccessExpression(node) ? node.name : node.argumentExpression,
        );
        if (isPortMember(symbol) && symbol !== undefined && !portMethods.has(symbol.name)) {
          portMethods.set(symbol.name, where(node));
        }
      }
      if (ts.isBindingElement(node) && ts.isObjectBindingPattern(node.parent)) {
        const symbol = checker.getSymbolAtLocation(node.propertyName ?? node.name);
        const type = checker.getTypeAtLocation(node.parent.parent);
        const prop = type.getProperty((node.propertyName ?? node.name).getText());
        if ((isPortMember(symbol) || isPortMember(prop)) && prop !== undefined)
          portMethods.set(prop.name, where(node));
      }
      // A port handed to code outside this package could call anything: report it.
      if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
        const callee = checker.getSymbolAtLocation(
          ts.isCallExpression(node) ? node.expression : node.expression,
        );
        const decl =
          (callee?.flags ?? 0) & ts.SymbolFlags.Alias
            ? checker.getAliasedSymbol(callee as ts.Symbol).declarations?.[0]
            : callee?.declarations?.[0];
        const external = decl !== undefined && !decl.getSourceFile().fileName.startsWith(dir);
        if (external) {
          for (const arg of node.arguments ?? []) {
            if (isPortType(checker.getTypeAtLocation(arg))) {
              const name = callee?.name ?? '?';
              // The one sanctioned wrapper: createCloudMapClient (analysed separately).
              if (name !== 'createCloudMapClient')
                escapes.push(`${where(node)} passes a CloudMapPort to ${name}`);
            }
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return { portMethods, escapes };
}

/** Methods of the object literal a factory function returns, with their bodies. */
function factoryMethods(file: string, factory: string): Map<string, ts.Node> {
  const sf = ts.createSourceFile(file, ts.sys.readFile(file) ?? '', ts.ScriptTarget.Latest, true);
  const out = new Map<string, ts.Node>();
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionDeclaration(node) && node.name?.text === factory) {
      const statements: readonly ts.Statement[] = node.body?.statements ?? [];
      const ret = statements.find((st): st is ts.ReturnStatement => ts.isReturnStatement(st));
      const obj = ret?.expression;
      if (obj === undefined || !ts.isObjectLiteralExpression(obj))
        throw new Error(`${factory} does not return an object literal`);
      for (const p of obj.properties) {
        if ((ts.isPropertyAssignment(p) || ts.isMethodDeclaration(p)) && ts.isIdentifier(p.name))
          out.set(p.name.text, p);
      }
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  if (out.size === 0) throw new Error(`${factory} not found in ${file}`);
  return out;
}

const identifiersIn = (node: ts.Node): string[] => {
  const ids: string[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isIdentifier(n)) ids.push(n.text);
    ts.forEachChild(n, visit);
  };
  visit(node);
  return ids;
};

/** Port method → Cloud Map API actions, from createSdkCloudMapPort. */
export function sdkActionsByPortMethod(): Map<string, Set<string>> {
  const methods = factoryMethods(join(coreCloudmap, 'sdk-port.ts'), 'createSdkCloudMapPort');
  const out = new Map<string, Set<string>>();
  for (const [name, node] of methods) {
    const actions = new Set<string>();
    for (const id of identifiersIn(node)) {
      const cmd = /^([A-Z]\w+)Command$/.exec(id);
      const pag = /^paginate([A-Z]\w+)$/.exec(id);
      if (cmd?.[1] !== undefined) actions.add(`servicediscovery:${cmd[1]}`);
      if (pag?.[1] !== undefined) actions.add(`servicediscovery:${pag[1]}`);
    }
    out.set(name, actions);
  }
  return out;
}

/**
 * Port methods the shared client calls on its own because an agent called `method`
 * (createCloudMapClient and the read and write builders it spreads in: methods whose result is
 * tracked → getOperation via the tracker).
 */
export function clientImpliedMethods(): Map<string, Set<string>> {
  const file = join(coreCloudmap, 'client.ts');
  const methods = new Map([
    ...factoryMethods(file, 'createCloudMapClient'),
    ...factoryMethods(file, 'cachedReads'),
    ...factoryMethods(file, 'evictingWrites'),
  ]);
  const source = ts.sys.readFile(file) ?? '';
  if (!/getOperation:\s*\(id\)\s*=>\s*caller\.attempt\('getOperation'/.test(source)) {
    throw new Error(
      'client.ts no longer wires the operation tracker to getOperation as expected; revisit this analysis',
    );
  }
  const out = new Map<string, Set<string>>();
  for (const [name, node] of methods) {
    const implied = new Set<string>();
    if (identifiersIn(node).includes('track')) implied.add('getOperation');
    out.set(name, implied);
  }
  return out;
}

/** STS actions the cross-account path uses (assume-role.ts). */
export function stsActions(): Set<string> {
  const file = join(coreCloudmap, 'assume-role.ts');
  const sf = ts.createSourceFile(file, ts.sys.readFile(file) ?? '', ts.ScriptTarget.Latest, true);
  const out = new Set<string>();
  const visit = (n: ts.Node): void => {
    if (ts.isNewExpression(n) && ts.isIdentifier(n.expression)) {
      const m = /^([A-Z]\w+)Command$/.exec(n.expression.text);
      if (m?.[1] !== undefined) out.add(`sts:${m[1]}`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** Every Cloud Map action an agent can cause: its port calls, the client's own, mapped. */
export function agentActions(agent: 'export-agent' | 'import-agent'): {
  usage: AgentUsage;
  methods: Set<string>;
  actions: Map<string, string>;
} {
  const usage = agentUsage(agent);
  const implied = clientImpliedMethods();
  const sdk = sdkActionsByPortMethod();
  const methods = new Set(usage.portMethods.keys());
  for (const m of [...methods]) for (const extra of implied.get(m) ?? []) methods.add(extra);
  const actions = new Map<string, string>();
  for (const m of methods) {
    const a = sdk.get(m);
    if (a === undefined || a.size === 0)
      throw new Error(`no SDK command found for port method ${m}`);
    for (const action of a) actions.set(action, m);
  }
  return { usage, methods, actions };
}
