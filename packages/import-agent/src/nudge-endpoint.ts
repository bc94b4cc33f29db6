import {
  ANNOTATION_NUDGE_ADDRESS,
  decodeNudgeMessage,
  MAX_NUDGE_BODY_BYTES,
  NUDGE_PATH,
  nudgeAddressOf,
  type Nudge,
} from '@cloudmap-mcs/core';
import type { AgentContext } from '@cloudmap-mcs/core/agent';
import type { PostReply } from '@cloudmap-mcs/core/runtime';
import type { ImportAgentConfig } from './config.js';
import type { PollerMetrics } from './poller/poller.js';

/**
 * The import agent's end of nudges (ADR 0018 decision 11): POST /nudge on the health port.
 * A nudge only makes the poller check the change feed now; what is imported still comes from
 * Cloud Map, so the endpoint needs no authentication beyond being well-formed and of this
 * clusterset. Answers: 202 accepted, 400 malformed or of another clusterset, 404 nudges off,
 * 503 not the leader (a standby has no poller).
 */
export interface NudgeEndpoint {
  /** Where this agent takes nudges (`ip:port`), published on its Lease; undefined: nowhere. */
  readonly address: string | undefined;
  /** Lease annotations to write while leading. */
  readonly leaseAnnotations: Record<string, string> | undefined;
}

export function serveNudges(
  ctx: AgentContext<ImportAgentConfig>,
  clustersetId: string,
  metrics: Pick<PollerMetrics, 'nudge'>,
  poller: () => { nudge(nudge: Nudge): boolean } | undefined,
): NudgeEndpoint {
  const { config } = ctx;
  ctx.health.route(NUDGE_PATH, {
    maxBodyBytes: MAX_NUDGE_BODY_BYTES,
    handle: (body): PostReply => {
      if (!config.nudge) return { status: 404, body: 'nudges are off (--nudge=false)' };
      const decoded = decodeNudgeMessage(body, clustersetId);
      if ('problem' in decoded) {
        metrics.nudge?.('invalid');
        return { status: 400, body: decoded.problem };
      }
      const target = poller();
      if (target === undefined || !target.nudge(decoded.nudge)) {
        metrics.nudge?.('standby');
        return { status: 503, body: 'not the leader' };
      }
      return { status: 202 };
    },
  });
  const address =
    config.nudge && config.nudgeHost !== undefined
      ? nudgeAddressOf(config.nudgeHost, ctx.health.port)
      : undefined;
  if (address !== undefined && !config.leaderElect)
    ctx.logger.info(
      'nudges taken, but without leader election there is no Lease to publish this agent’s address on: writers do not know it and the change feed is polled at --poll-feed-seconds',
    );
  else if (config.nudge && address === undefined)
    ctx.logger.warn(
      'nudges on but no address to take them at (set --nudge-host to this pod’s IP); the change feed is polled at --poll-feed-seconds',
    );
  return {
    address,
    leaseAnnotations: address === undefined ? undefined : { [ANNOTATION_NUDGE_ADDRESS]: address },
  };
}
