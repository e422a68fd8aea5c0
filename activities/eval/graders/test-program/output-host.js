// The output's process: runs a candidate's output (JavaScript), then answers the tests' calls about what it defined:
// a global name's value, a property, a call, a `new`. It runs in a sandbox of its own (no network, nothing of
// Flywheel's but this folder, its own uid and limits) and never sees the tests: only the calls they make, relayed
// by the eval activity. Whatever it does to itself (exit, print, redefine anything) stays in this process.
// Usage: node output-host.js MAX_MESSAGE_BYTES; the output is the first message on the wire.
'use strict';
const vm = require('node:vm');
const { openWire, WireClosed } = require('./wire');
const { Peer } = require('./peer');

const wire = openWire(Number(process.argv[2]));
/** The globals before the output ran: a name the output left as it was is not the output's to answer. */
const before = new Map(Object.getOwnPropertyNames(globalThis).map((n) => [n, Object.getOwnPropertyDescriptor(globalThis, n)]));

function thrownText(e) {
  try {
    return e instanceof Error ? String(e.message) : String(e);
  } catch {
    return 'the output threw a value that has no message';
  }
}

/** The value of a global name as the output's code sees it (top-level let, const and class too), or none. */
function globalOf(name) {
  let value;
  try {
    value = vm.runInThisContext(name);
  } catch (e) {
    if (e instanceof ReferenceError || e instanceof SyntaxError) return { missing: true };
    throw e;
  }
  const was = before.get(name);
  if (was && ('value' in was ? was.value === value : was.get === Object.getOwnPropertyDescriptor(globalThis, name)?.get))
    return { missing: true };
  return { ok: peer.encode(value) };
}

const target = (m) => peer.local(m.h);
const callee = (m) => {
  const fn = peer.local(m.h);
  if (typeof fn !== 'function') throw new TypeError('not a function');
  return fn;
};
const argsOf = (m) => (Array.isArray(m.args) ? m.args.map((a) => peer.decode(a)) : peer.fail('a call without arguments'));

const peer = new Peer({
  wire,
  realm: { newArray: () => [], newObject: () => ({}), plainProtos: [Object.prototype], makeError: (m) => new Error(m) },
  exportsObjects: true,
  fullProxies: false,
  thrownText,
  handlers: {
    global: (m) => (typeof m.name === 'string' ? globalOf(m.name) : peer.fail('a global without a name')),
    get: (m) => ({ ok: peer.encode(target(m)[peer.decodeKey(m.k)]) }),
    set: (m) => {
      target(m)[peer.decodeKey(m.k)] = peer.decode(m.v);
      return { ok: { u: 1 } };
    },
    has: (m) => ({ ok: peer.decodeKey(m.k) in target(m) }),
    delete: (m) => ({ ok: delete target(m)[peer.decodeKey(m.k)] }),
    keys: (m) => ({ ok: peer.encode(Reflect.ownKeys(target(m)).filter((k) => typeof k === 'string')) }),
    describe: (m) => {
      const obj = target(m);
      const d = Reflect.getOwnPropertyDescriptor(obj, peer.decodeKey(m.k));
      if (!d) return { missing: true };
      const value = 'value' in d ? d.value : d.get ? Reflect.apply(d.get, obj, []) : undefined;
      return { ok: peer.encode({ value, enumerable: d.enumerable }) };
    },
    proto: (m) => ({ ok: peer.encodeHandle(Object.getPrototypeOf(target(m))) }),
    call: (m) => ({ ok: peer.encode(Reflect.apply(callee(m), peer.decode(m.self), argsOf(m))) }),
    new: (m) => ({ ok: peer.encode(Reflect.construct(callee(m), argsOf(m))) }),
  },
});

function serve() {
  try {
    for (;;) {
      const m = wire.receive();
      if (m === null || typeof m !== 'object' || typeof m.op !== 'string')
        throw new Error('the eval activity sent something other than a call');
      peer.serve(m);
    }
  } catch (e) {
    if (e instanceof WireClosed) process.exit(0);
    throw e;
  }
}

let load;
try {
  load = wire.receive();
} catch (e) {
  if (e instanceof WireClosed) process.exit(0);
  throw e;
}
if (load === null || typeof load !== 'object' || load.t !== 'load' || typeof load.source !== 'string')
  throw new Error('the first message on the wire is not the output');
try {
  vm.runInThisContext(load.source, { filename: 'output.js' });
} catch (e) {
  // The tests find what it defined before it threw, and fail on what it did not.
  process.stderr.write(`the output threw as it ran: ${thrownText(e).slice(0, 200)}\n`);
}
// After the output's own promise jobs: then this process does nothing but answer.
setImmediate(serve);
