// What researchers do from the dashboard, each mapped onto the workflows' own signals and updates (never a direct
// write): the workflow validates an update and refuses a wrong one with its reason, which the result page shows.
import type { SignalDefinition } from '@temporalio/client';
import { approveProposalUpdate, pauseSignal, resumeSignal, setBudgetUpdate, stopSignal } from '../../contracts/inner-loop';
import { approvePromotionUpdate } from '../../contracts/outer-loop';
import { latestOuterLoop, startOuterLoopWorkflow } from '../../services/campaign-loops';
import { BadRequestError, type DashboardContext } from './context';
import { href } from './html';

export type Fields = Record<string, string>;

export interface Action {
  /** What confirming will do, in one sentence. */
  describe(f: Fields): string;
  /** Does it; returns what happened, in one sentence. */
  run(ctx: DashboardContext, f: Fields): Promise<string>;
  /** The page to go back to. */
  back(f: Fields): string;
}

const need = (f: Fields, name: string): string => {
  const v = f[name]?.trim();
  if (!v) throw new BadRequestError(`missing form field "${name}"`);
  return v;
};

const optionalInt = (f: Fields, name: string): number | undefined => {
  const v = f[name]?.trim();
  if (!v) return undefined;
  if (!/^\d+$/.test(v)) throw new BadRequestError(`${name} must be a whole number, got "${v}"`);
  return Number(v);
};

const temporalOf = (ctx: DashboardContext) => {
  if (!ctx.temporal)
    throw new BadRequestError(
      'actions need Temporal, and this dashboard has no connection to it (start it with `flywheel up`, or set TEMPORAL_ADDRESS)',
      503,
    );
  return ctx.temporal;
};

const signal = (name: 'pause' | 'resume' | 'stop', def: SignalDefinition<[], string>, what: string): Action => ({
  describe: (f) => `Send "${name}" to inner loop ${need(f, 'loop')}: ${what}.`,
  async run(ctx, f) {
    await temporalOf(ctx).client.workflow.getHandle(need(f, 'loop')).signal(def);
    return `${name} sent to ${f.loop}`;
  },
  back: (f) => href.loop(need(f, 'loop')),
});

export const ACTIONS: Record<string, Action> = {
  pause: signal('pause', pauseSignal, 'it starts no new experiment until resumed'),
  resume: signal('resume', resumeSignal, 'it starts new experiments again'),
  stop: signal('stop', stopSignal, 'it finishes the running experiments, then selects the winner'),
  budget: {
    describe: (f) =>
      `Change the budget of inner loop ${need(f, 'loop')} to ${f.experiments || '(unchanged)'} experiments, ${f.parallelism || '(unchanged)'} at once.`,
    async run(ctx, f) {
      const experiments = optionalInt(f, 'experiments');
      const parallelism = optionalInt(f, 'parallelism');
      if (experiments === undefined && parallelism === undefined) throw new BadRequestError('give experiments or parallelism (or both)');
      const r = await temporalOf(ctx)
        .client.workflow.getHandle(need(f, 'loop'))
        .executeUpdate(setBudgetUpdate, { args: [{ experiments, parallelism }] });
      return `budget of ${f.loop}: ${r.experiments} experiments, ${r.parallelism} at once`;
    },
    back: (f) => href.loop(need(f, 'loop')),
  },
  'approve-proposal': {
    describe: (f) => `${f.approve === 'false' ? 'Reject' : 'Approve'} proposal ${need(f, 'experiment')} of inner loop ${need(f, 'loop')}.`,
    run: (ctx, f) =>
      temporalOf(ctx)
        .client.workflow.getHandle(need(f, 'loop'))
        .executeUpdate(approveProposalUpdate, { args: [{ experimentId: need(f, 'experiment'), approve: f.approve !== 'false' }] }),
    back: (f) => href.loop(need(f, 'loop')),
  },
  'approve-promotion': {
    describe: (f) =>
      `${f.approve === 'false' ? 'Reject' : 'Approve'} the promotion awaiting approval in outer loop ${need(f, 'workflow')}.`,
    run: (ctx, f) =>
      temporalOf(ctx)
        .client.workflow.getHandle(need(f, 'workflow'))
        .executeUpdate(approvePromotionUpdate, { args: [{ approve: f.approve !== 'false', by: 'dashboard' }] }),
    back: (f) => href.campaign(need(f, 'workflow').split('/outer/')[0]),
  },
  'trigger-outer': {
    describe: (f) => `Start one outer iteration of campaign ${need(f, 'campaign')} now, with its latest campaign version.`,
    async run(ctx, f) {
      const t = temporalOf(ctx);
      const campaignId = need(f, 'campaign');
      const running = await latestOuterLoop(t.client, campaignId, { running: true });
      if (running) throw new BadRequestError(`campaign "${campaignId}" already has a running outer loop, ${running.workflowId}`, 409);
      const h = await startOuterLoopWorkflow(t.client, t.endpoints, { campaignId, iterations: 1, trigger: 'ui' });
      return `started ${h.workflowId}`;
    },
    back: (f) => href.campaign(need(f, 'campaign')),
  },
};
