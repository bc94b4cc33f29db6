import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EmulatorConfig, EmulatorConfigPatch } from './admin-types.js';
import type { Engine } from './engine.js';
import {
  AdminValidationError,
  validateConfigPatch,
  validateFaultConfig,
} from './admin-validate.js';
import type { Faults } from './faults.js';
import type { EmulatorState } from './model.js';
import type { StateFile } from './persistence.js';
import { readBody } from './protocol.js';
import type { Stats } from './stats.js';

export interface AdminContext {
  engine: Engine;
  faults: Faults;
  stats: Stats;
  stateFile: StateFile | undefined;
  config: () => EmulatorConfig;
  setConfig: (patch: EmulatorConfigPatch) => void;
}

class AdminError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'AdminError';
  }
}

async function jsonBody<T>(req: IncomingMessage): Promise<T> {
  const raw = await readBody(req);
  if (raw.trim() === '') return {} as T;
  try {
    return JSON.parse(raw) as T;
  } catch {
    throw new AdminError(400, 'body is not JSON');
  }
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body ?? {});
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

type Route = (req: IncomingMessage, ctx: AdminContext) => Promise<unknown>;

/** The admin API; documented in docs/cloudmap-emulator.md. Paths are relative to /_emulator. */
const routes: Record<string, Route> = {
  'GET /health': async () => ({ status: 'ok' }),
  'GET /stats': async (_req, ctx) => ctx.stats.snapshot(),
  'DELETE /stats': async (_req, ctx) => {
    ctx.stats.reset();
    return ctx.stats.snapshot();
  },
  'GET /faults': async (_req, ctx) => ctx.faults.config,
  'PUT /faults': async (req, ctx) => {
    ctx.faults.replace(validateFaultConfig(await jsonBody<unknown>(req)));
    return ctx.faults.config;
  },
  'PATCH /faults': async (req, ctx) => {
    ctx.faults.merge(validateFaultConfig(await jsonBody<unknown>(req)));
    return ctx.faults.config;
  },
  'DELETE /faults': async (_req, ctx) => {
    ctx.faults.clear();
    return ctx.faults.config;
  },
  'GET /config': async (_req, ctx) => ctx.config(),
  'PATCH /config': async (req, ctx) => {
    ctx.setConfig(validateConfigPatch(await jsonBody<unknown>(req)));
    return ctx.config();
  },
  /** Back to a fresh emulator: empty state, no faults (AWS rate limits), zero counts. */
  'POST /reset': async (_req, ctx) => {
    ctx.engine.reset();
    ctx.faults.clear();
    ctx.stats.reset();
    ctx.stateFile?.save();
    return { status: 'reset' };
  },
  'GET /state': async (_req, ctx) => {
    ctx.engine.advance();
    return ctx.engine.state;
  },
  'PUT /state': async (req, ctx) => {
    const state = await jsonBody<EmulatorState>(req);
    if (state.version !== 1) throw new AdminError(400, 'state must have version 1');
    ctx.engine.state = state;
    ctx.engine.dirty = true;
    ctx.stateFile?.save();
    return { status: 'replaced' };
  },
  'POST /state/save': async (_req, ctx) => {
    if (!ctx.stateFile) throw new AdminError(409, 'the emulator was started without a state file');
    ctx.engine.advance();
    ctx.stateFile.save();
    return { path: ctx.stateFile.path };
  },
};

export async function handleAdmin(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  ctx: AdminContext,
): Promise<void> {
  const route = routes[`${req.method ?? 'GET'} ${path}`];
  try {
    if (!route) throw new AdminError(404, `no admin route ${req.method} ${path}`);
    reply(res, 200, await route(req, ctx));
  } catch (err) {
    const status =
      err instanceof AdminError ? err.status : err instanceof AdminValidationError ? 400 : 500;
    reply(res, status, { error: (err as Error).message });
  }
}
