// A TCP proxy on 127.0.0.1 in front of PostgreSQL, for the network-cut fault: cut() resets every open
// connection and refuses new ones for a while, as a network partition looks to a client.
import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** Open client connections now. */
  open(): number;
  /** Destroys every connection and refuses new ones for `ms`; resolves when connections are accepted again. */
  cut(ms: number): Promise<number>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: () => number }): Promise<TcpProxy> {
  const pairs = new Set<[net.Socket, net.Socket]>();
  let refuseUntil = 0;
  const server = net.createServer((client) => {
    if (Date.now() < refuseUntil) return void client.destroy();
    const upstream = net.connect(target.port(), target.host);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    const drop = (): void => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const s of pair) s.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    open: () => pairs.size,
    async cut(ms) {
      refuseUntil = Date.now() + ms;
      const n = pairs.size;
      // resetAndDestroy sends RST: the client sees ECONNRESET, not a polite end of stream.
      for (const [c, u] of [...pairs]) {
        c.resetAndDestroy();
        u.destroy();
      }
      pairs.clear();
      await new Promise((r) => setTimeout(r, ms));
      return n;
    },
    async close() {
      for (const [c, u] of pairs) {
        c.destroy();
        u.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
