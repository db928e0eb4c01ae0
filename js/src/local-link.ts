// A `Link` that calls an in-process `Engine` directly (Node, and the worker side in browsers).

import type { Link } from './db.js';
import { ENGINE_OPS, type Engine, type HostLease } from './engine.js';
import { invalidArgument } from './errors.js';

type Method = (...args: unknown[]) => unknown;

/** Runs one named engine operation now (only open/openWorld/close return promises). */
export function dispatch(engine: Engine, op: string, args: unknown[]): unknown {
  if (!ENGINE_OPS.has(op)) throw invalidArgument(`unknown operation ${op}`);
  return (engine as unknown as Record<string, Method>)[op]!.apply(engine, args);
}

/** Runs one named operation with its database's storage steps around it: the host's prepare
 * before (OPFS opens file handles), its settle after (IndexedDB commits what the operation
 * changed; its failure fails the operation). Synchronous when the host has neither (Node's
 * hosts, memory). With `split`, returns `{ value, settled }` once the operation ran, without
 * waiting for the settle (a caller running operations in a queue lets the next one run, and
 * a burst shares one commit). */
export function runOp(engine: Engine, op: string, args: unknown[]): unknown;
export function runOp(engine: Engine, op: string, args: unknown[], split: true): Promise<{ value: unknown; settled?: Promise<void> }>;
export function runOp(engine: Engine, op: string, args: unknown[], split = false): unknown {
  const lease: HostLease | undefined = op === 'open' || op === 'openWorld' || typeof args[0] !== 'number' ? undefined : engine.lease(args[0]);
  if (!lease || (!lease.prepare && !lease.settle)) {
    if (!split) return dispatch(engine, op, args);
    return (async () => ({ value: await dispatch(engine, op, args) }))();
  }
  const ran = (async () => {
    if (lease.prepare) {
      const prepared = lease.prepare();
      // A close goes ahead even when the storage cannot prepare (e.g. out of quota): it is
      // what releases the database.
      await (op === 'close' ? prepared.catch(() => {}) : prepared);
    }
    const value = dispatch(engine, op, args);
    // Registered in the same synchronous step as the operation: the commit it waits for holds
    // everything the operation changed.
    const settled = op !== 'close' && lease.settle ? lease.settle() : undefined;
    settled?.catch(() => {}); // handled by whoever awaits it; never an unhandled rejection
    return { value: await value, settled };
  })();
  if (split) return ran;
  return ran.then(async ({ value, settled }) => {
    await settled;
    return value;
  });
}

export class LocalLink implements Link {
  constructor(private readonly engine: Engine) {}

  call(op: string, args: unknown[]): Promise<unknown> {
    try {
      return Promise.resolve(runOp(this.engine, op, args));
    } catch (e) {
      return Promise.reject(e);
    }
  }
}
