// A `Link` that calls an in-process `Engine` directly (Node, and the worker side in browsers).

import type { Link } from './db.js';
import type { Engine } from './engine.js';
import { toErrorShape, type ErrorShape } from './errors.js';

type Method = (...args: unknown[]) => unknown;

const OPS = new Set([
  'open',
  'get',
  'getMany',
  'put',
  'del',
  'write',
  'iterator',
  'nextv',
  'seek',
  'closeIterator',
  'snapshot',
  'releaseSnapshot',
  'scan',
  'compactRange',
  'flush',
  'properties',
  'close',
]);

/** Runs one named engine operation; database operations first let the host prepare. */
export async function dispatch(engine: Engine, op: string, args: unknown[]): Promise<unknown> {
  if (!OPS.has(op)) throw Object.assign(new Error(`unknown operation ${op}`), { code: 'LEVEL_INVALID_ARGUMENT' });
  const method = (engine as unknown as Record<string, Method>)[op]!;
  return await method.apply(engine, args);
}

export class LocalLink implements Link {
  constructor(private readonly engine: Engine) {}

  call(op: string, args: unknown[]): Promise<unknown> {
    try {
      // Synchronous operations run now; only open/close return promises.
      const method = (this.engine as unknown as Record<string, Method>)[op];
      if (!OPS.has(op) || method === undefined) throw Object.assign(new Error(`unknown operation ${op}`), { code: 'LEVEL_INVALID_ARGUMENT' });
      return Promise.resolve(method.apply(this.engine, args));
    } catch (e) {
      return Promise.reject(e);
    }
  }
}

export type { ErrorShape };
export { toErrorShape };
