// The tests' process: runs each item's tests, one item at a time, each in a fresh vm context whose names the tests
// neither define nor find among JavaScript's own resolve to the output's (looked up in the output's process, through
// the eval activity). It runs in a sandbox of its own and is never given the output's code; the output can only
// answer its calls. The verdict is this process's: an item passes when its tests ran to their end without throwing.
// Usage: node tests-host.js MAX_MESSAGE_BYTES; items arrive on the wire ({t:'begin', item, tests, timeoutMs}).
'use strict';
const vm = require('node:vm');
const { Console } = require('node:console');
const { openWire, WireClosed } = require('./wire');
const { Peer, ItemAborted } = require('./peer');

const wire = openWire(Number(process.argv[2]));
const TESTS_FILE = 'tests.js';
const IDENTIFIER = /^[\p{ID_Start}$_][\p{ID_Continue}$\u200c\u200d]*$/u;
/** What the tests may `require`; anything else is the output's business, not theirs. */
const TEST_MODULES = new Set(['assert', 'node:assert', 'assert/strict', 'node:assert/strict', 'util', 'node:util']);
const testConsole = new Console(process.stderr);
const testRequire = (name) => {
  if (!TEST_MODULES.has(name)) throw new Error(`the tests may require only ${[...TEST_MODULES].join(', ')}`);
  return require(name);
};

/** The item being run: its number, and whether a promise of its tests was rejected unhandled. */
let current;
process.on('unhandledRejection', () => {
  if (current) current.rejected = true;
});

const peer = new Peer({
  wire,
  realm: undefined, // each item's context, set by runItem
  exportsObjects: false,
  fullProxies: true,
  // A callback's exception never carries its text (or its stack) to the output: it could quote the tests.
  thrownText: () => 'a callback of the tests threw',
  handlers: {
    call: (m) => {
      const fn = peer.local(m.h);
      if (typeof fn !== 'function' || !Array.isArray(m.args)) peer.fail('a call of something the tests did not pass as a function');
      return {
        ok: peer.encode(
          Reflect.apply(
            fn,
            peer.decode(m.self),
            m.args.map((a) => peer.decode(a)),
          ),
        ),
      };
    },
  },
  onControl: (m) => {
    if (m.t === 'abort' && current && m.item === current.item) {
      peer.aborted = true;
      throw new ItemAborted('the eval activity ended the item');
    }
    // An abort for an item already done crossed our `done` on the wire: nothing to do.
  },
});

/**
 * Whether V8 asks for a name while it declares the tests' top-level functions, before any of their code runs (it
 * checks the global's prototype chain for each): not a read, and never asked of the output, which would learn the
 * tests' own names. The tests are compiled one line down, so that check is the only lookup at no line of theirs.
 */
function declaring() {
  const { prepareStackTrace, stackTraceLimit } = Error;
  Error.prepareStackTrace = (_e, sites) => sites;
  Error.stackTraceLimit = 64;
  const holder = {};
  Error.captureStackTrace(holder, declaring);
  const sites = holder.stack;
  Error.prepareStackTrace = prepareStackTrace;
  Error.stackTraceLimit = stackTraceLimit;
  const site = sites.find((s) => s.getFileName() === TESTS_FILE);
  return !site || !(site.getLineNumber() >= 1);
}

/** A fresh context for one item: JavaScript's globals, `assert`, `require` (of TEST_MODULES), `console`, and the output's names below them. */
function contextFor() {
  const context = vm.createContext(
    { assert: require('node:assert'), require: testRequire, console: testConsole },
    { microtaskMode: 'afterEvaluate' },
  );
  const own = vm.runInContext('({ Array, Object, Error, fn: function () {} })', context);
  peer.realm = {
    newArray: () => new own.Array(),
    newObject: () => new own.Object(),
    plainProtos: [own.Object.prototype, Object.prototype],
    makeError: (message) => new own.Error(message),
    functionTarget: () => Reflect.apply(Function.prototype.bind, own.fn, [null]),
    objectTarget: () => Object.create(null),
  };
  const remote = (key) => typeof key === 'string' && IDENTIFIER.test(key);
  const lookup = (key) => (declaring() ? { missing: true } : peer.call({ op: 'global', name: key }));
  // The global object's prototype: a name found nowhere in the context reaches here, and is asked of the output.
  const fallThrough = new Proxy(own.Object.prototype, {
    get: (t, key, receiver) => {
      if (!remote(key) || key in t) return Reflect.get(t, key, receiver);
      const r = lookup(key);
      return r.missing ? undefined : r.value;
    },
    has: (t, key) => (!remote(key) || key in t ? Reflect.has(t, key) : !lookup(key).missing),
    // An assignment to an undeclared name makes it the tests' own global, never the output's.
    set: (_t, key, value, receiver) =>
      Reflect.defineProperty(receiver, key, { value, writable: true, enumerable: true, configurable: true }),
  });
  Object.setPrototypeOf(vm.runInContext('globalThis', context), fallThrough);
  return context;
}

/** Runs one item's tests: `{ok}`, or why not (a failure's text stays here: it could quote the tests). */
function runItem(m) {
  peer.reset();
  let script;
  try {
    script = new vm.Script(`\n${m.tests}`, { filename: TESTS_FILE, lineOffset: -1 });
  } catch {
    return { ok: false, compileError: true };
  }
  let threw = false;
  let timedOut = false;
  try {
    script.runInContext(contextFor(), { timeout: m.timeoutMs });
  } catch (e) {
    threw = true;
    timedOut = e && e.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT';
  }
  if (peer.violation !== undefined) return { ok: false, violation: peer.violation };
  if (peer.aborted) return { ok: false, aborted: true };
  if (timedOut) return { ok: false, timedOut: true };
  return { ok: !threw };
}

async function main() {
  for (;;) {
    let m;
    try {
      m = wire.receive();
    } catch (e) {
      if (e instanceof WireClosed) return;
      throw e;
    }
    if (m.t === 'abort') continue;
    if (m.t !== 'begin' || !Number.isSafeInteger(m.item) || typeof m.tests !== 'string' || !Number.isSafeInteger(m.timeoutMs))
      throw new Error('the eval activity sent something other than an item');
    current = { item: m.item, rejected: false };
    let verdict = runItem(m);
    // Node reports unhandled rejections on the way out of this turn of its loop.
    await new Promise((resolve) => setImmediate(resolve));
    if (verdict.ok && current.rejected) verdict = { ok: false };
    wire.send({ t: 'done', item: m.item, ...verdict });
    current = undefined;
    peer.reset();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`the tests' harness failed: ${e && e.message}\n`);
    process.exit(70);
  },
);
