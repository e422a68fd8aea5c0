// Synchronous calls between the tests' process and the output's process, and the values that cross. JSON-like values
// (primitives, including undefined, NaN, ±Infinity, -0 and bigint; arrays; plain objects) are copied; every other
// object stays where it lives and the other side gets a handle to it. Calls nest: while one side waits for its answer
// it serves the other's calls (a comparator the tests pass to the output's sort).
//
// Wire values: a JSON primitive as itself; {u:1} undefined; {n:'NaN'|'Infinity'|'-Infinity'|'-0'}; {b:'123'} bigint;
// {a:[...]} an array; {o:[[key, value], ...]} a plain object; {h:id, f?:1} the sender's object (f: callable);
// {r:id} the receiver's own object, handed back.
'use strict';

/** Deepest nesting and most values one message may hold. */
const MAX_DEPTH = 100;
const MAX_VALUES = 100_000;
/** Longest error message passed on. */
const MAX_MESSAGE = 1000;

/** A value that cannot cross (a symbol, a cycle, a Map of the tests'): the call that tried fails with this. */
class CrossingError extends TypeError {}
/** The other side broke the protocol: the item is an error, whatever happens next. */
class ProtocolViolation extends Error {}
/** The eval activity ended the item (its time limit, the output's process died): unwind. */
class ItemAborted extends Error {}

const WELL_KNOWN = new Map(
  Object.getOwnPropertyNames(Symbol)
    .filter((n) => typeof Symbol[n] === 'symbol')
    .map((n) => [Symbol[n], n]),
);
const BY_NAME = new Map([...WELL_KNOWN].map(([s, n]) => [n, s]));
const SPECIAL_NUMBERS = new Map([
  ['NaN', NaN],
  ['Infinity', Infinity],
  ['-Infinity', -Infinity],
  ['-0', -0],
]);
const isId = (x) => Number.isSafeInteger(x) && x > 0;

class Peer {
  /**
   * @param {object} o
   * @param o.wire the harness's wire (wire.js)
   * @param o.realm where decoded values are made: {newArray, newObject, plainProtos, makeError, functionTarget, objectTarget}
   * @param o.exportsObjects every object crosses as a handle (the output's side); else only functions do (the tests')
   * @param o.fullProxies the other side's objects act as themselves here: get, set, call, new (the tests' side);
   *   else they can only be called (the output's side: what it gets are the tests' callbacks)
   * @param o.handlers the ops this side serves, op => (message) => reply fields
   * @param o.onControl a message that is neither a call nor an answer, arriving while this side waits
   * @param o.thrownText the text a served call's exception becomes in its answer
   */
  constructor(o) {
    Object.assign(this, o);
    this.seq = 0;
    this.reset();
  }

  /** A new item: nothing of the last one's handles survives. */
  reset() {
    this.exported = new Map(); // id -> this side's object
    this.exportIds = new Map(); // this side's object -> id
    this.proxies = new Map(); // id -> stand-in for the other side's object
    this.proxyIds = new WeakMap(); // stand-in -> id
    this.violation = undefined;
    this.aborted = false;
  }

  fail(what) {
    if (this.violation === undefined) this.violation = what;
    this.aborted = true;
    throw new ProtocolViolation(what);
  }

  /** Sends a call and waits for its answer, serving the other side's calls meanwhile. */
  request(message) {
    if (this.aborted) throw new ItemAborted(this.violation ?? 'the item was ended');
    const id = ++this.seq;
    this.wire.send({ ...message, id });
    for (;;) {
      const m = this.wire.receive();
      if (m === null || typeof m !== 'object' || Array.isArray(m)) this.fail('a message that is not an object');
      if (m.re === id) return m;
      if (typeof m.op === 'string') this.serve(m);
      else if (typeof m.t === 'string' && this.onControl) this.onControl(m);
      else this.fail('an answer to no call');
    }
  }

  /** A call, its answer decoded: a value, or a thrown error made here. */
  call(message) {
    const m = this.request(message);
    if (typeof m.err === 'string') throw this.realm.makeError(m.err.slice(0, MAX_MESSAGE));
    if (m.missing === true) return { missing: true };
    if (!('ok' in m)) this.fail('an answer with neither a value nor an error');
    return { value: this.decode(m.ok) };
  }

  serve(m) {
    if (!isId(m.id)) this.fail('a call without an id');
    const handler = Object.prototype.hasOwnProperty.call(this.handlers, m.op) ? this.handlers[m.op] : undefined;
    if (!handler) this.fail(`a call of "${String(m.op).slice(0, 40)}", which this side does not serve`);
    let reply;
    try {
      reply = { re: m.id, ...handler(m) };
    } catch (e) {
      if (e instanceof ItemAborted || e instanceof ProtocolViolation) throw e;
      reply = { re: m.id, err: this.thrownText(e) };
    }
    try {
      this.wire.send(reply);
    } catch (e) {
      if (!(e instanceof RangeError)) throw e;
      this.wire.send({ re: m.id, err: 'the answer is larger than a message may be' });
    }
  }

  // --- values ---

  exportId(v) {
    let id = this.exportIds.get(v);
    if (id === undefined) {
      id = this.exported.size + 1;
      this.exported.set(id, v);
      this.exportIds.set(v, id);
    }
    return id;
  }

  /** This side's object with `id`, handed back by the other side. */
  local(id) {
    if (!isId(id) || !this.exported.has(id)) this.fail('a handle this side never gave');
    return this.exported.get(id);
  }

  encode(v, depth = 0, seen = new Set(), count = { n: 0 }) {
    if (++count.n > MAX_VALUES) throw new CrossingError(`a value of more than ${MAX_VALUES} parts cannot cross`);
    switch (typeof v) {
      case 'undefined':
        return { u: 1 };
      case 'boolean':
      case 'string':
        return v;
      case 'number':
        if (Number.isNaN(v)) return { n: 'NaN' };
        if (v === Infinity) return { n: 'Infinity' };
        if (v === -Infinity) return { n: '-Infinity' };
        if (Object.is(v, -0)) return { n: '-0' };
        return v;
      case 'bigint':
        return { b: v.toString() };
      case 'symbol':
        throw new CrossingError('a symbol cannot cross between the tests and the output');
    }
    if (v === null) return null;
    const theirs = this.proxyIds.get(v);
    if (theirs !== undefined) return { r: theirs };
    if (typeof v === 'function') return { h: this.exportId(v), f: 1 };
    if (seen.has(v)) throw new CrossingError('a value that contains itself cannot cross');
    if (depth >= MAX_DEPTH) throw new CrossingError(`a value nested deeper than ${MAX_DEPTH} cannot cross`);
    if (Array.isArray(v)) {
      seen.add(v);
      const a = [];
      for (let i = 0; i < v.length; i++) a.push(this.encode(v[i], depth + 1, seen, count));
      seen.delete(v);
      return { a };
    }
    const proto = Object.getPrototypeOf(v);
    if (proto === null || this.realm.plainProtos.includes(proto)) {
      seen.add(v);
      const o = [];
      for (const k of Object.keys(v)) o.push([k, this.encode(v[k], depth + 1, seen, count)]);
      seen.delete(v);
      return { o };
    }
    if (this.exportsObjects) return { h: this.exportId(v) };
    const kind = (proto && typeof proto.constructor === 'function' && proto.constructor.name) || 'object';
    throw new CrossingError(`a ${kind} cannot cross to the output: only JSON-like values and functions do`);
  }

  /** An object of this side's, always as a handle (a prototype: its methods must stay live). */
  encodeHandle(v) {
    if (v === null) return null;
    const theirs = this.proxyIds.get(v);
    return theirs !== undefined ? { r: theirs } : { h: this.exportId(v), ...(typeof v === 'function' ? { f: 1 } : {}) };
  }

  decode(w, depth = 0) {
    if (w === null || typeof w === 'string' || typeof w === 'boolean') return w;
    if (typeof w === 'number') return w;
    if (typeof w !== 'object' || Array.isArray(w)) this.fail('a value of no known shape');
    if (depth >= MAX_DEPTH) this.fail(`a value nested deeper than ${MAX_DEPTH}`);
    const keys = Object.keys(w);
    const only = (...allowed) => keys.every((k) => allowed.includes(k)) || this.fail('a value of no known shape');
    if ('u' in w && only('u')) return undefined;
    if ('n' in w && only('n')) {
      if (!SPECIAL_NUMBERS.has(w.n)) this.fail('an unknown number');
      return SPECIAL_NUMBERS.get(w.n);
    }
    if ('b' in w && only('b')) {
      if (typeof w.b !== 'string' || !/^-?\d{1,10000}$/.test(w.b)) this.fail('a malformed bigint');
      return BigInt(w.b);
    }
    if ('a' in w && only('a')) {
      if (!Array.isArray(w.a)) this.fail('a malformed array');
      const out = this.realm.newArray();
      for (let i = 0; i < w.a.length; i++) out[i] = this.decode(w.a[i], depth + 1);
      return out;
    }
    if ('o' in w && only('o')) {
      if (!Array.isArray(w.o)) this.fail('a malformed object');
      const out = this.realm.newObject();
      for (const pair of w.o) {
        if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string') this.fail('a malformed object entry');
        // defineProperty, not assignment: a "__proto__" key is a key like any other, never a prototype.
        Object.defineProperty(out, pair[0], {
          value: this.decode(pair[1], depth + 1),
          writable: true,
          enumerable: true,
          configurable: true,
        });
      }
      return out;
    }
    if ('h' in w && only('h', 'f')) {
      if (!isId(w.h)) this.fail('a malformed handle');
      return this.standIn(w.h, w.f === 1);
    }
    if ('r' in w && only('r')) return this.local(w.r);
    return this.fail('a value of no known shape');
  }

  encodeKey(k) {
    if (typeof k === 'string') return k;
    const name = WELL_KNOWN.get(k);
    return name === undefined ? undefined : { s: name };
  }

  decodeKey(k) {
    if (typeof k === 'string') return k;
    const s = k !== null && typeof k === 'object' ? BY_NAME.get(k.s) : undefined;
    if (s === undefined) this.fail('a malformed property key');
    return s;
  }

  /** What stands here for the other side's object `id`: the same stand-in each time, so identity holds. */
  standIn(id, callable) {
    const known = this.proxies.get(id);
    if (known) return known;
    const p = this.fullProxies ? this.remoteObject(id, callable) : this.remoteCallback(id);
    this.proxies.set(id, p);
    this.proxyIds.set(p, id);
    return p;
  }

  /** The tests' function, on the output's side: calling it is all the output can do with it. */
  remoteCallback(id) {
    const peer = this;
    return function callbackOfTheTests(...args) {
      return peer.call({ op: 'call', h: id, self: peer.encode(this), args: args.map((a) => peer.encode(a)) }).value;
    };
  }

  /** The output's object, on the tests' side: every operation on it is a call to the output's process. */
  remoteObject(id, callable) {
    const peer = this;
    const get = (k) => {
      const key = peer.encodeKey(k);
      return key === undefined ? undefined : peer.call({ op: 'get', h: id, k: key }).value;
    };
    let self;
    const traps = {
      get: (_t, k) => get(k),
      set: (_t, k, v) => {
        const key = peer.encodeKey(k);
        if (key === undefined) return false;
        peer.call({ op: 'set', h: id, k: key, v: peer.encode(v) });
        return true;
      },
      has: (_t, k) => {
        const key = peer.encodeKey(k);
        return key !== undefined && peer.call({ op: 'has', h: id, k: key }).value === true;
      },
      deleteProperty: (_t, k) => {
        const key = peer.encodeKey(k);
        return key !== undefined && peer.call({ op: 'delete', h: id, k: key }).value === true;
      },
      ownKeys: () => {
        const keys = peer.call({ op: 'keys', h: id }).value;
        if (!Array.isArray(keys) || !keys.every((k) => typeof k === 'string')) peer.fail('own keys that are not strings');
        return [...new Set(keys)];
      },
      getOwnPropertyDescriptor: (_t, k) => {
        const key = peer.encodeKey(k);
        if (key === undefined) return undefined;
        const r = peer.call({ op: 'describe', h: id, k: key });
        if (r.missing) return undefined;
        const d = r.value;
        if (d === null || typeof d !== 'object' || typeof d.enumerable !== 'boolean') peer.fail('a malformed property description');
        return { value: d.value, writable: true, enumerable: d.enumerable, configurable: true };
      },
      defineProperty: (_t, k, desc) => ('value' in desc ? traps.set(undefined, k, desc.value) : false),
      getPrototypeOf: () => {
        const proto = peer.call({ op: 'proto', h: id }).value;
        return proto === null || typeof proto === 'object' || typeof proto === 'function'
          ? proto
          : peer.fail('a prototype that is not an object');
      },
      setPrototypeOf: () => false,
      preventExtensions: () => false,
      apply: (_t, thisArg, args) =>
        peer.call({ op: 'call', h: id, self: peer.encode(thisArg), args: args.map((a) => peer.encode(a)) }).value,
      construct: (_t, args, newTarget) => {
        if (newTarget !== self) throw new CrossingError("a class of the tests cannot extend one of the output's");
        const made = peer.call({ op: 'new', h: id, args: args.map((a) => peer.encode(a)) }).value;
        if (made === null || (typeof made !== 'object' && typeof made !== 'function')) peer.fail('a constructor that made no object');
        return made;
      },
    };
    self = new Proxy(callable ? this.realm.functionTarget() : this.realm.objectTarget(), traps);
    return self;
  }
}

module.exports = { Peer, CrossingError, ProtocolViolation, ItemAborted, MAX_MESSAGE };
