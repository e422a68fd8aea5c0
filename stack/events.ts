// What the stack reports as it starts, serves and stops, and the one-line rendering `flywheel up` (and
// `flywheel demo`) print; tests wait for these lines, so change them together.
import type { QueueFamily } from '../contracts/queues';

export type StackEvent =
  | { kind: 'temporal-ready'; address: string; uiUrl: string | undefined; namespace: string; external: boolean; pid?: number }
  | { kind: 'postgres-ready'; redactedUrl: string; external: boolean; migrationsApplied: number; pid?: number }
  | { kind: 'search-attributes-added'; names: string[] }
  | { kind: 'worker-ready'; family: QueueFamily; taskQueue: string; pid: number; restart: number }
  | { kind: 'worker-exited'; family: QueueFamily; pid: number; how: string; restartInMs: number }
  | { kind: 'stack-up'; uiUrl: string | undefined; namespace: string; taskQueues: string[]; address?: string }
  | { kind: 'warning'; message: string }
  | { kind: 'stopping' }
  | { kind: 'stopped' };

/** The line printed for an event (pad keeps the component names in one column). */
export function formatStackEvent(e: StackEvent): string {
  switch (e.kind) {
    case 'temporal-ready':
      return `✓ temporal  ${e.address} (${e.uiUrl ? `ui ${e.uiUrl}, ` : ''}namespace ${e.namespace}${e.external ? ', external' : ''})`;
    case 'postgres-ready':
      return `✓ postgres  ${e.redactedUrl} (${e.external ? 'external' : 'embedded'}, ${e.migrationsApplied} migration(s) applied)`;
    case 'search-attributes-added':
      return `  registered search attributes ${e.names.join(', ')}`;
    case 'worker-ready':
      return `✓ worker ${e.family}  queue ${e.taskQueue} (pid ${e.pid}${e.restart ? `, restart ${e.restart}` : ''})`;
    case 'worker-exited':
      return `↻ worker ${e.family} exited (${e.how}); restarting in ${(e.restartInMs / 1000).toFixed(1)}s`;
    case 'stack-up':
      return [
        `flywheel is up`,
        `  Temporal UI  ${e.uiUrl ?? '(external cluster: use its UI)'}`,
        `  namespace    ${e.namespace}`,
        `  task queues  ${e.taskQueues.join(', ')}`,
        ...startCommandLines(e),
        `  Ctrl-C stops everything`,
      ].join('\n');
    case 'warning':
      return `! ${e.message}`;
    case 'stopping':
      return 'stopping…';
    case 'stopped':
      return 'stopped';
  }
}

/**
 * A ready-to-paste start of an inner loop with the stock `temporal` CLI, on this stack's orchestration queue (its
 * prefix included): the input docs/operations.md documents (contracts/loop-input.ts checks it).
 */
function startCommandLines(e: Extract<StackEvent, { kind: 'stack-up' }>): string[] {
  const queue = e.taskQueues.find((q) => q.endsWith('-orchestration'));
  if (!queue) return [];
  const address = e.address ? ` --address ${e.address}` : '';
  return [
    `  start a loop temporal workflow start${address} --namespace ${e.namespace} --task-queue ${queue} \\`,
    `                 --type innerLoop --workflow-id NAME/inner/ui-1 --input '{"campaignId": "NAME"}'`,
  ];
}
