import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Engine } from './engine.js';
import {
  CloudMapError,
  InjectedServerError,
  InternalFailure,
  RequestLimitExceeded,
  SerializationException,
  ThrottlingException,
  UnknownOperationException,
  type StatusMode,
} from './errors.js';
import type { Faults } from './faults.js';
import { gatewayHostOf, isDataHost } from './gateway/proxy.js';
import { DATA_PLANE_OPERATIONS, HANDLERS } from './handlers/index.js';
import { newRequestId } from './ids.js';
import type { Stats } from './stats.js';
import { asObject } from './validate.js';

const TARGET_PREFIX = 'Route53AutoNaming_v20170314.';
const CONTENT_TYPE = 'application/x-amz-json-1.1';

export interface ProtocolContext {
  engine: Engine;
  faults: Faults;
  stats: Stats;
  statusMode: () => StatusMode;
  /** Called after each handled call (persistence hooks in here). */
  afterCall: () => void;
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, status: number, body: unknown, requestId: string): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': CONTENT_TYPE,
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': requestId,
  });
  res.end(text);
}

/**
 * Who made a call, for the per-caller counts (`Stats`): the access key id of the SigV4
 * `Authorization` header (`AWS4-HMAC-SHA256 Credential=<key id>/<date>/...`); signatures are
 * not checked, so this is what the caller says it is — enough to tell a benchmark's processes
 * apart when each runs with its own key id.
 */
function callerOf(authorization: string | undefined): string {
  const m = /Credential=([^/,\s]{1,128})\//.exec(authorization ?? '');
  return m?.[1] ?? '(unsigned)';
}

/**
 * One AWS JSON 1.1 call: `POST /` with `X-Amz-Target: Route53AutoNaming_v20170314.<Op>`.
 * Signatures are not checked (any credentials work). Faults apply in the order a real outage
 * would show them: the whole service, then latency, then per-call throttling and 5xx.
 */
export async function handleAwsCall(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: ProtocolContext,
): Promise<void> {
  const requestId = newRequestId();
  const caller = callerOf(req.headers.authorization);
  const target = String(req.headers['x-amz-target'] ?? '');
  const op = target.startsWith(TARGET_PREFIX)
    ? target.slice(TARGET_PREFIX.length)
    : target || '(none)';
  const raw = await readBody(req);
  // Set when the call came through the gateway: the AWS host name the client connected to.
  const host = gatewayHostOf(req.socket);

  const outage = ctx.faults.config.outage;
  if (outage === 'reset') {
    ctx.stats.record(op, 'serverErrors', caller, host);
    req.socket.destroy();
    return;
  }
  const fail = (err: CloudMapError): void => {
    const status = err.status(ctx.statusMode());
    const outcome =
      err instanceof ThrottlingException || err instanceof RequestLimitExceeded
        ? 'throttled'
        : status >= 500
          ? 'serverErrors'
          : 'clientErrors';
    ctx.stats.record(op, outcome, caller, host);
    send(res, status, err.body(), requestId);
  };
  if (outage === 'unavailable') return fail(new InjectedServerError(503));

  const latency = ctx.faults.latencyMs(op);
  if (latency > 0) await sleep(latency);

  const handler = target.startsWith(TARGET_PREFIX) ? HANDLERS[op] : undefined;
  if (!handler) return fail(new UnknownOperationException(target));
  // AWS serves DiscoverInstances* on data-servicediscovery.<region> only, the rest on
  // servicediscovery.<region> only; the wrong host answers UnknownOperationException.
  if (host !== undefined && DATA_PLANE_OPERATIONS.has(op) !== isDataHost(host))
    return fail(new UnknownOperationException(target));
  if (ctx.faults.throttled(op)) {
    return fail(
      DATA_PLANE_OPERATIONS.has(op) ? new RequestLimitExceeded() : new ThrottlingException(),
    );
  }
  const injected = ctx.faults.serverError(op);
  if (injected !== undefined) return fail(new InjectedServerError(injected));

  try {
    let input: Record<string, unknown>;
    try {
      input = raw.trim() === '' ? {} : asObject(JSON.parse(raw), '$');
    } catch (err) {
      if (err instanceof CloudMapError) throw err;
      throw new SerializationException('Request body is not valid JSON');
    }
    const { engine } = ctx;
    engine.advance();
    const failOperation = ctx.faults.failOperation(op);
    engine.decideFailure = () =>
      failOperation
        ? { code: 'INTERNAL_FAILURE', message: 'Failure injected by the emulator admin API' }
        : undefined;
    const output = handler(engine, input);
    ctx.stats.record(op, 'succeeded', caller, host);
    send(res, 200, output, requestId);
  } catch (err) {
    if (err instanceof CloudMapError) return fail(err);
    console.error(`cloudmap-emulator: ${op} failed unexpectedly`, err);
    fail(new InternalFailure());
  } finally {
    ctx.engine.decideFailure = () => undefined;
    ctx.afterCall();
  }
}
