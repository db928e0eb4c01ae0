// The fence between the engine and its wasm instance: every object the instance hands out
// (wasm-bindgen's classes: databases, cursors, exports; known by their `free`) reaches the
// engine fenced, and so does the module's `Database` class. Once the engine stops (a trap left
// the instance's memory in an unknown state; see `Engine.stopped`), a call through the fence
// never reaches the instance: `free()` does nothing (wasm-bindgen's glue has no instance check,
// so after a reset it would free memory of the new instance), any other method throws the
// stop error. A trap in a call stops the engine right there, whatever path made the call (an
// operation, idle maintenance, a decode worker's answer delivered between steps).
//
// Invariants: what a fenced method returns is fenced when it is an instance object; fenced
// objects passed back as arguments reach the instance as the objects it made; the check runs
// at each call, so a method taken before the stop and called after it is refused too.

/** What the fence asks of the engine that owns the instance. */
export interface FenceGate {
  /** The error the engine stopped with; undefined while it runs. */
  stopped(): Error | undefined;
  /** A call into the instance threw `e`: the error to throw instead (a trap stops the engine
   * and becomes its stop error; any other error comes back as it is). */
  failure(e: unknown): unknown;
}

/** Each fenced object's target, under this key: arguments are unwrapped before they reach the
 * instance (its glue reads their pointers and may take ownership of them). A symbol rather
 * than a WeakMap: a miss (every byte array passed in) is an inline-cached property miss. */
const TARGET: unique symbol = Symbol('strata fence target');

const NOTHING: ReadonlySet<PropertyKey> = new Set();

/** `Symbol.dispose` where the runtime has it: wasm-bindgen makes it an alias of `free`, so it
 * too does nothing after the stop. */
const DISPOSE: symbol | undefined = (Symbol as { dispose?: symbol }).dispose;

/** `target` behind the fence of `gate`: a plain object with a wrapper for each of its methods
 * (its own and its prototypes', for a class its static ones) and a getter for each of its
 * accessors and own fields. Not a Proxy: a proxy's trap costs about 120 ns a call, the
 * wrapper a few. `passAfterStop`: methods that still answer after the stop because they touch
 * no instance state a trap can have broken (the memory figure). */
export function fence<T extends object>(target: T, gate: FenceGate, passAfterStop: ReadonlySet<PropertyKey> = NOTHING): T {
  const fenced: Record<PropertyKey, unknown> = {};
  Object.defineProperty(fenced, TARGET, { value: target });
  const check = (): void => {
    const stop = gate.stopped();
    if (stop !== undefined) throw stop;
  };
  for (let p: object | null = target; p !== null && p !== Object.prototype && p !== Function.prototype; p = Object.getPrototypeOf(p) as object | null) {
    for (const name of Reflect.ownKeys(p)) {
      if (name === 'constructor' || name === TARGET || Object.prototype.hasOwnProperty.call(fenced, name)) continue;
      const d = Object.getOwnPropertyDescriptor(p, name)!;
      if (typeof d.value === 'function' && name !== 'prototype') {
        fenced[name] = wrap(target, d.value as (...args: unknown[]) => unknown, gate, name === 'free' || name === DISPOSE, passAfterStop.has(name));
      } else if (d.get !== undefined) {
        const get = d.get;
        Object.defineProperty(fenced, name, {
          enumerable: d.enumerable,
          get: () => {
            check();
            try {
              return get.call(target);
            } catch (e) {
              throw gate.failure(e);
            }
          },
        });
      } else if (p === target && name !== 'prototype') {
        // A field (wasm-bindgen's `__wbg_ptr`): read through, as it is now.
        Object.defineProperty(fenced, name, { enumerable: d.enumerable, get: () => (target as Record<PropertyKey, unknown>)[name] });
      }
    }
  }
  return fenced as T;
}

/** Method `original` of `target` behind the fence. */
function wrap(target: object, original: (...args: unknown[]) => unknown, gate: FenceGate, frees: boolean, passes: boolean): (...args: unknown[]) => unknown {
  return (...args: unknown[]): unknown => {
    const stop = gate.stopped();
    if (stop !== undefined && !passes) {
      if (frees) return undefined;
      throw stop;
    }
    let result: unknown;
    try {
      for (let i = 0; i < args.length; i++) args[i] = unfenced(args[i]);
      result = original.apply(target, args);
    } catch (e) {
      throw gate.failure(e);
    }
    return isInstanceObject(result) ? fence(result, gate) : result;
  };
}

/** The object behind a fence (anything else as it is). */
export function unfenced<T>(value: T): T {
  return (typeof value === 'object' && value !== null ? ((value as { [TARGET]?: T })[TARGET] ?? value) : value);
}

/** An object of the instance: wasm-bindgen gives every exported class a `free`. */
function isInstanceObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && typeof (value as { free?: unknown }).free === 'function';
}
