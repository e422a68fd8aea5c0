// A TCP port that was free a moment ago, for a child server that must be told its port (vLLM's, say).
import net from 'node:net';

/** A TCP port on `host` that was free a moment ago (a child told to bind it may still lose a race: retry then). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, host, () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}
