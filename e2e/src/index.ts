export {
  agentBundle,
  agentEnvironment,
  agentNodeArgs,
  agentNodeOptions,
  ensureAgentBundle,
  type AgentPackage,
} from './agent-bundle.js';
export { createAppDeployment } from './app-deployment.js';
export { ensureControlPlaneBinaries, controlPlaneBinaries } from './binaries.js';
export type { ClusterInfo, ClusterPorts } from './cluster.js';
export {
  describeLeftovers,
  teardownClean,
  loadClusterset,
  reapOrphanedClustersets,
  startClusterset,
  stopClusterset,
  type Clusterset,
  type ClustersetOptions,
  type ClustersetState,
  type TeardownReport,
} from './clusterset.js';
export { cloudMapEnv, type EmulatorMode, type RunningEmulator } from './emulator.js';
export {
  kubeconfigYaml,
  loadKubeconfig,
  writeKubeconfig,
  type KubeconfigSpec,
} from './kubeconfig.js';
export { silentProgress, stderrProgress, type Progress } from './log.js';
export { createNamespace, type TestNamespace } from './namespaces.js';
export {
  clusterNetwork,
  parseIpFamilyMode,
  type ClusterNetwork,
  type IpFamilyMode,
} from './network.js';
export { isPortFree } from './ports.js';
export { isRunning, killOnExit, type ProcessRecord } from './processes.js';
export {
  clusterIdProperty,
  clustersetProperty,
  installCrds,
  mintServiceAccountToken,
  serviceAccountKubeconfig,
  setClusterProperty,
  statusOf,
  type TokenOptions,
} from './resources.js';
export { waitFor, WaitTimeoutError } from './wait.js';
export { nodeImageRefs, buildNodeImages } from './nodes/images.js';
export { realNodeSupport, type RealNodeSupport } from './nodes/prereqs.js';
export type { RealNodePlan } from './nodes/plan.js';
export { ecsLikeService, sdkFromEnv, type EcsLikeService, type EcsTask } from './ecs-like.js';
