// `flywheel run spec.yaml`: validates the spec (nothing is written when it is invalid), registers it as a campaign
// version (`<name>@<hash>`: the same spec is the same version), starts an inner loop on that version and shows live
// progress. Ctrl-C detaches; the workflow keeps running.
import path from 'node:path';
import type { Command } from 'commander';
import { startInnerLoopWorkflow } from '../../services/campaign-loops';
import { campaignVersionOf, registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { detachOnSigint } from '../detach';
import { followLoop } from '../follow-loop';
import { withSession } from '../session';
import { uiLink } from '../../temporal/ui-links';
import { loadSpecFile } from '../spec-file';
import { checkKnobs } from '../knob-check';
import { InvalidSpecError } from '../../core/spec';
import { resolveConfig } from '../../core/config';
import { agentNotice } from '../agent-notice';
import { DEFAULT_EXAMPLE_TASK, exampleTask } from '../../services/example-tasks';

/** The default example task's spec, as a path from the checkout's root. */
const EXAMPLE_SPEC = path.relative(path.join(__dirname, '..', '..'), exampleTask(DEFAULT_EXAMPLE_TASK).spec);

export function registerRun(program: Command): void {
  program
    .command('run')
    .description("start a campaign's inner loop and follow it (Ctrl-C detaches; the loop keeps running)")
    .argument('<spec>', 'the campaign spec (YAML or JSON)')
    .option('--id <workflowId>', 'workflow id (default: <campaign>/inner/<timestamp>)')
    .option('--detach', 'start it and return at once')
    .option('--json', 'print the result as JSON (progress goes to stderr)')
    .addHelpText('after', `\nExample:\n  $ flywheel run ${EXAMPLE_SPEC}\n`)
    .action(async (file: string, opts: { id?: string; detach?: boolean; json?: boolean }) => {
      const spec = loadSpecFile(file);
      // A knob the trainer does not have fails every experiment: refused here, before anything is registered (after
      // the size cap, which campaignVersionOf applies as registration will).
      campaignVersionOf(spec, file);
      const knobs = await checkKnobs(spec, resolveConfig(process.env, process.cwd()).home);
      if (knobs.problems.length > 0) throw new InvalidSpecError(knobs.problems, file);
      if (knobs.unchecked) console.error(`note: trainer knobs not checked: ${knobs.unchecked}`);
      const notice = agentNotice(spec, process.env);
      if (notice) console.error(notice);
      const ctrlC = detachOnSigint();
      await withSession(async (s) => {
        const version = await registerCampaignVersion(s.db, spec, file);
        console.error(`campaign ${version.versionId} (${version.created ? 'new' : 'existing'})`);
        const handle = await startInnerLoopWorkflow(s.client, s.endpoints, version.versionId, opts.id);
        const link = uiLink(s.endpoints, handle.workflowId);
        console.error(`started ${handle.workflowId}${link ? `\n  Temporal UI: ${link}` : ''}`);
        if (opts.detach) return;
        await followLoop(s, handle, spec, !!opts.json, ctrlC.requested);
      }).finally(() => ctrlC.dispose());
    });
}
