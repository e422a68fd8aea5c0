// The fault run's PostgreSQL: a real embedded server the harness owns (so it can kill and restart it under a running
// stack), reached by everyone through a TCP proxy (so the network between them can be cut). The server runs under
// test/faults/pg-child.ts, a process of its own.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAlive, stopProcess, waitForExit } from '../../stack/processes';
import { freePort } from '../helpers/ports';
import { startTcpProxy, type TcpProxy } from './tcp-proxy';

const RUN_TS = path.join(__dirname, '..', '..', 'bin', 'run-ts.js');
const CHILD = path.join(__dirname, 'pg-child.ts');

export interface FaultPostgres {
  /** The `flywheel` database through the proxy: what the stack, the feedback API and the checks use. */
  url: string;
  proxy: TcpProxy;
  /** SIGKILLs the postmaster, waits `downMs`, starts it again on the same data folder and port. */
  killAndRestart(downMs: number): Promise<void>;
  stop(): Promise<void>;
}

interface Server {
  url: string;
  /** The postmaster. */
  pid: number;
  /** The pg-child process that holds it. */
  holder: number;
}

export async function startFaultPostgres(home: string): Promise<FaultPostgres> {
  const dataDir = path.join(home, 'pg-harness');
  const port = await freePort();
  let server = await startServer(dataDir, port);
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: () => port });
  const url = new URL(server.url);
  url.port = String(proxy.port);
  return {
    url: url.toString(),
    proxy,
    async killAndRestart(downMs) {
      process.kill(server.pid, 'SIGKILL');
      await waitForExit(server.pid, 10_000);
      await waitForExit(server.holder, 10_000);
      await sleep(downMs);
      // Backends orphaned by the kill hold the shared memory until they notice; the start is retried until they go.
      for (let tries = 0; ; tries++) {
        try {
          server = await startServer(dataDir, port);
          return;
        } catch (e) {
          if (tries >= 60) throw new Error(`PostgreSQL did not restart on ${dataDir}: ${(e as Error).message}`);
          await sleep(500);
        }
      }
    },
    async stop() {
      await proxy.close();
      if (isAlive(server.holder)) process.kill(server.holder, 'SIGTERM');
      if (!(await waitForExit(server.pid, 20_000))) await stopProcess(server.pid, { signal: 'SIGKILL' });
      await stopProcess(server.holder, { signal: 'SIGKILL' });
    },
  };
}

function startServer(dataDir: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RUN_TS, CHILD, dataDir, String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) {
        const { url, pid } = JSON.parse(line) as { url: string; pid: number };
        resolve({ url, pid, holder: child.pid! });
      }
    });
    child.once('exit', (code) => reject(new Error(err.trim().split('\n').pop() || `pg-child exited with ${code}`)));
  });
}
