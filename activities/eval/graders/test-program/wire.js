// The harness's end of the grading wire: one JSON message per line on fd 3, a socket to the eval activity (which
// relays between the output's process and the tests' process). Read and written synchronously: a call from the
// tests blocks until its answer, as a local call would, and nothing else runs in the meantime.
'use strict';
const fs = require('node:fs');

/** The socket the eval activity gives every harness as its fd 3. */
const WIRE_FD = 3;
const nap = new Int32Array(new SharedArrayBuffer(4));

/** The eval activity closed the wire: the harness has nothing left to do. */
class WireClosed extends Error {}

/** `maxLine`: the longest message, in bytes, either way (the eval activity cuts at the same size). */
function openWire(maxLine, fd = WIRE_FD) {
  const lines = [];
  let partial = Buffer.alloc(0);
  const chunk = Buffer.allocUnsafe(64 * 1024);

  function fill() {
    while (lines.length === 0) {
      let n;
      try {
        n = fs.readSync(fd, chunk, 0, chunk.length, null);
      } catch (e) {
        // A non-blocking socket has nothing yet: wait a little and read again.
        if (e.code === 'EAGAIN' || e.code === 'EINTR') {
          Atomics.wait(nap, 0, 0, 1);
          continue;
        }
        throw e;
      }
      if (n === 0) throw new WireClosed('the wire to the eval activity closed');
      const data = partial.length > 0 ? Buffer.concat([partial, chunk.subarray(0, n)]) : Buffer.from(chunk.subarray(0, n));
      let start = 0;
      for (let nl = data.indexOf(10); nl !== -1; nl = data.indexOf(10, start)) {
        lines.push(data.toString('utf8', start, nl));
        start = nl + 1;
      }
      partial = data.subarray(start);
      if (partial.length > maxLine) throw new Error(`a message of more than ${maxLine} bytes arrived`);
    }
  }

  return {
    /** The next message, waiting for it. */
    receive() {
      fill();
      return JSON.parse(lines.shift());
    },
    send(message) {
      const buf = Buffer.from(JSON.stringify(message) + '\n', 'utf8');
      if (buf.length > maxLine + 1) throw new RangeError(`a message of ${buf.length} bytes is over the ${maxLine}-byte cap`);
      for (let off = 0; off < buf.length;) {
        try {
          off += fs.writeSync(fd, buf, off, buf.length - off);
        } catch (e) {
          if (e.code !== 'EAGAIN' && e.code !== 'EINTR') throw e;
          Atomics.wait(nap, 0, 0, 1);
        }
      }
    },
  };
}

module.exports = { openWire, WireClosed };
