// `flywheel propose CAMPAIGN --patch FILE`: a researcher's own change to the recipe, through the checks an agent's
// patch passes (activities/recipes/check-patch.ts) against the running loop's best commit, at once: a refused patch
// is one line and exit 2, and nothing is stored. An accepted one is stored as a queued recipe patch, marked as the
// researcher's, and the loop is told its id by the proposePatch update (never the diff): the next batch runs it,
// with the researcher's `--params` over the best experiment's knobs (checked against the search space first).
import type { Command } from 'commander';
import { checkPatch } from '../../activities/recipes/check-patch';
import { proposePatchUpdate } from '../../contracts/inner-loop';
import { parseKnobValues } from '../../core/knob-values';
import { loopBestRecipe } from '../../services/best-recipe-commit';
import { latestInnerLoop } from '../../services/campaign-loops';
import { settleQueuedPatch } from '../../services/recipes/loop-patches';
import { recordPatch, triedPatches } from '../../services/recipes/recipe-patches';
import { UsageError } from '../errors';
import { decodeUtf8File, readCappedFile } from '../text-file';
import { withSession } from '../session';

/** A patch file is read up to this size; the recipe's own cap (trainer.recipe.maxPatchBytes) is checked after. */
const MAX_PATCH_FILE_BYTES = 1 << 20;

interface ProposeOptions {
  patch: string;
  hypothesis?: string;
  params?: string;
  as?: string;
  json?: boolean;
}

export function registerPropose(program: Command): void {
  program
    .command('propose')
    .description("queue a researcher's patch to the recipe for the running inner loop's next batch, after the same checks as an agent's")
    .argument('<campaign>')
    .requiredOption(
      '--patch <file>',
      "a unified diff against the loop's best recipe commit (`flywheel recipe show CAMPAIGN` prints its files)",
    )
    .option('--hypothesis <text>', 'what the change should do, shown beside its result', '')
    .option('--params <knob=value,...>', "knob values its experiment runs with, over the best experiment's (each in the search space)")
    .option('--as <name>', 'who proposes it (recorded as researcher:<name>)', process.env.USER || 'unknown')
    .option('--json', 'print {"workflowId", "patchId", "baseCommit", "commit", "summary", "params", "reply"} as JSON')
    .addHelpText(
      'after',
      `
The patch is checked at once against the running loop's best commit (the size cap, only trainer.recipe.mutable
files, not a duplicate of a patch tried before, applies cleanly, Python compiles in the sandbox), then stored and
sent to the loop, which runs it in its next batch with the best experiment's knobs, or with --params over them
(each a knob of the campaign's search space with a value it allows: checked before the patch).

Exit codes: 0 queued, 1 refused by the loop (no experiment left in its budget, ending) or Temporal unreachable,
2 a refused patch (one line naming the rule), a bad --params value, an unreadable file, no running inner loop or
no recipe.

Paths in the diff are relative to the recipe folder (git's a/ and b/ prefixes are fine).

Example:
  $ flywheel propose torch-demo --patch warmup.diff --hypothesis "warm the learning rate up over 50 steps" --as ada
  $ flywheel propose torch-demo --patch warmup.diff --params lr=0.003,steps=200
`,
    )
    .action(async (campaignId: string, opts: ProposeOptions) => {
      const name = opts.as?.trim();
      if (!name || /\s/.test(name)) throw new UsageError(`--as must be one word, got "${opts.as ?? ''}"`);
      const diff = decodeUtf8File(opts.patch, readCappedFile(opts.patch, MAX_PATCH_FILE_BYTES, 'a patch', fail), 'a patch', fail);
      await withSession(async (s) => {
        const h = await latestInnerLoop(s.client, campaignId);
        if (!h || (await h.describe()).status.name !== 'RUNNING')
          throw new UsageError(`no running inner loop for campaign "${campaignId}" (\`flywheel run SPEC\` starts one)`);
        const best = await loopBestRecipe(s.db, h.workflowId);
        if ('none' in best) throw new UsageError(best.none);
        const knobs = opts.params === undefined ? undefined : parseKnobValues(opts.params, best.searchSpace);
        if (knobs && 'problem' in knobs) throw new UsageError(`--params ${knobs.problem}`);
        const checked = await checkPatch({
          home: s.config.home,
          campaign: best.campaignId,
          baseCommit: best.commit,
          diff,
          mutable: best.recipe.mutable,
          maxBytes: best.recipe.maxPatchBytes,
          tried: await triedPatches(s.db, best.campaignId),
          unsandboxed: best.unsandboxed,
        });
        if (!checked.ok) throw new UsageError(`${opts.patch}: refused by ${checked.reason}`);
        // One id per change and loop: the same patch proposed twice is the duplicate check's, never a second row.
        const patchId = `${h.workflowId}/researcher/${checked.normalizedHash.slice(0, 12)}`;
        await recordPatch(s.db, {
          id: patchId,
          campaignId: best.campaignId,
          innerLoopId: h.workflowId,
          baseCommit: best.commit,
          diff,
          normalizedHash: checked.normalizedHash,
          summary: checked.summary,
          proposer: `researcher:${name}`,
          hypothesis: opts.hypothesis ?? '',
          params: knobs?.params ?? null,
          status: 'queued',
        });
        const reply = await h.executeUpdate(proposePatchUpdate, { args: [{ patchId }] }).catch(async (e: unknown) => {
          // Refused by the loop (its budget is spent, it is ending): the stored row says why, and no batch takes it.
          const why = e instanceof Error ? ((e.cause as Error | undefined)?.message ?? e.message) : String(e);
          await settleQueuedPatch(s.db, patchId, { reason: `refused by ${h.workflowId}: ${why}` });
          throw e;
        });
        const out = {
          workflowId: h.workflowId,
          patchId,
          baseCommit: best.commit,
          commit: checked.commit,
          summary: checked.summary,
          params: knobs?.params ?? null,
          reply,
        };
        console.log(
          opts.json
            ? JSON.stringify(out)
            : `${reply}\n  ${checked.summary} on ${best.commit.slice(0, 12)} (as ${checked.commit.slice(0, 12)})`,
        );
      });
    });
}

const fail = (message: string) => new UsageError(message);
