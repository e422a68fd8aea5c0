// Starting and stopping Flywheel's HTTP servers (feedback API, codec endpoint, dashboard) the same way.
import type http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ListeningServer {
  /** `http://HOST:PORT` as bound (the real port when 0 was asked for). */
  url: string;
  close(): Promise<void>;
}

/** Binds `server` to `host:port` and resolves once it listens; rejects with the bind error (e.g. EADDRINUSE). */
export async function listenHttp(server: http.Server, port: number, host: string): Promise<ListeningServer> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${shown}:${addr.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Keep-alive clients would otherwise hold close() open until they time out.
        server.closeAllConnections();
      }),
  };
}
