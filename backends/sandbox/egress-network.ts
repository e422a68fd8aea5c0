// `trainer.network: true`: the trainer gets egress (a model hub, a package index), never the stack. Its sandbox runs
// in a network namespace of its own whose one way out is slirp4netns (egress-netns.sh), with a blackhole route to
// every address of this host, to link-local and cloud-metadata ranges, and to the stack's servers wherever they run
// (TEMPORAL_ADDRESS, DATABASE_URL, the agents' endpoint): PostgreSQL, Temporal, the dashboard and the feedback API are
// out of reach even where they listen on a public address. `predict` and graders never get a network.
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { findOnPath } from './find-on-path';
import type { SandboxIdentity } from './sandbox-identity';

export const EGRESS_SCRIPT = path.join(__dirname, 'egress-netns.sh');

/** Ranges no sandbox reaches: link-local (169.254.169.254 answers cloud credentials), and slirp4netns's host gateway. */
const ALWAYS_BLOCKED = ['169.254.0.0/16', '10.0.2.2/32', 'fd00:ec2::254/128'];

/** The worker's variables that name a server of the stack or the agents. */
const STACK_ENDPOINTS = ['TEMPORAL_ADDRESS', 'DATABASE_URL', 'OPENAI_BASE_URL', 'FLYWHEEL_TEMPORAL_ADDRESS'];

/** Every destination a networked sandbox must not reach, as routes (`192.0.2.2/32`), loopback apart (its own). */
export function egressBlackholes(env: Record<string, string | undefined> = process.env): string[] {
  const out = new Set<string>(ALWAYS_BLOCKED);
  for (const addrs of Object.values(os.networkInterfaces()))
    for (const a of addrs ?? []) if (!a.internal) out.add(route(a.address.split('%')[0]));
  for (const name of STACK_ENDPOINTS) for (const ip of resolveHost(hostOf(env[name]))) out.add(route(ip));
  return [...out].filter((r) => !/^127\.|^::1\//.test(r));
}

function route(ip: string): string {
  return net.isIPv6(ip) ? `${ip}/128` : `${ip}/32`;
}

/** The host part of `host:port` or of a URL, if any. */
function hostOf(value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return new URL(value).hostname.replace(/^\[|\]$/g, '') || undefined;
  } catch {
    return undefined;
  }
  const m = value.match(/^\[?([^\]]+?)\]?(:\d+)?$/);
  return m?.[1];
}

/** The addresses of `host`: itself when it is an address, else what the system resolver says (none when it fails). */
function resolveHost(host: string | undefined): string[] {
  if (!host) return [];
  if (net.isIP(host)) return [host];
  try {
    const out = execFileSync('getent', ['ahosts', host], { encoding: 'utf8', timeout: 2000 });
    return [
      ...new Set(
        out
          .split('\n')
          .map((l) => l.split(/\s+/)[0])
          .filter((a) => net.isIP(a)),
      ),
    ];
  } catch {
    return [];
  }
}

/** `argv` (a bubblewrap command that keeps its network) inside the egress-only namespace. */
export function egressArgv(identity: SandboxIdentity, blackholes: string[], argv: string[]): string[] {
  return ['/bin/sh', EGRESS_SCRIPT, identity.kind === 'uid' ? '0' : '1', blackholes.join(' '), '--', ...argv];
}

export type EgressProbe = { ok: true } | { ok: false; reason: string };

/** Whether this host can give a sandbox egress: slirp4netns, unshare and ip (Debian: slirp4netns, util-linux, iproute2). */
export function probeEgress(): EgressProbe {
  for (const [program, pkg] of [
    ['slirp4netns', 'slirp4netns'],
    ['unshare', 'util-linux'],
    ['ip', 'iproute2'],
  ] as const) {
    if (!findOnPath(program, `${process.env.PATH ?? ''}:/usr/sbin:/sbin`))
      return {
        ok: false,
        reason: `trainer.network needs ${program} for the trainer's egress-only network (Debian: apt-get install ${pkg})`,
      };
  }
  return { ok: true };
}
