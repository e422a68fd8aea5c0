// What every dashboard page and action receives: the database, and Temporal when the dashboard can reach it (live
// workflow state, the Temporal UI links and the actions need it; the pages work without it).
import type { Client } from '@temporalio/client';
import type { Db } from '../../db/client';
import type { LoopQueues } from '../../services/campaign-loops';
import { uiLink, type UiEndpoint } from '../../temporal/ui-links';
import { NonRetryableError } from '../../core/errors';

export interface DashboardTemporal {
  client: Client;
  endpoints: UiEndpoint & LoopQueues;
}

export interface DashboardContext {
  db: Db;
  temporal?: DashboardTemporal;
  /** The Temporal UI page of a workflow, when the stack has a UI. */
  link(workflowId: string): string | undefined;
  /** The hidden form field every POST must echo (see server.ts). */
  csrf: string;
}

export function makeContext(db: Db, csrf: string, temporal?: DashboardTemporal): DashboardContext {
  return { db, temporal, csrf, link: (id) => (temporal ? uiLink(temporal.endpoints, id) : undefined) };
}

/** A page for an id that does not exist (404). */
export class NotFoundError extends NonRetryableError {}

/** A request the dashboard refuses with a message (400 by default). */
export class BadRequestError extends NonRetryableError {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** `p`, or undefined when it has not settled within `ms` (a query to a workflow with no worker would hang). */
export async function within<T>(p: Promise<T>, ms = 3000): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([p.catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
