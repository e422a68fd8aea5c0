// Campaign versions: a spec is registered as an immutable, content-addressed version `<name>@<hash>`, and a loop runs
// the version it pinned. Registering the same spec again finds the same version; an edited spec is a new one.
import crypto from 'node:crypto';
import { and, desc, eq, like } from 'drizzle-orm';
import { NotFoundError } from '../../core/errors';
import { InvalidSpecError, SpecTooLargeError, type CampaignSpec } from '../../core/spec';
import { parseSpec } from '../task-registry';
import { taskTeacherProblem } from '../example-tasks';
import type { Db } from '../../db/client';
import { campaigns, campaignVersions, innerLoops, outerIterations } from '../../db/schema';
import { campaignIdOfVersion } from '../../contracts/campaign';
import { pinTaskRefs } from './pin-task';
import { resolveConfig } from '../../core/config';
import { pinRecipe } from '../recipes/pin-recipe';
import { recordCommit } from '../recipes/recipe-commits';

/**
 * The largest spec registered, as canonical JSON. Real specs are a few KB; a spec file is capped at 256 KiB too
 * (cli/spec-file.ts), but YAML aliases can expand a small file, and the dashboard or a script may register one.
 */
export const MAX_SPEC_JSON_BYTES = 256 * 1024;

/** JSON with every object's keys sorted: the same spec always gives the same text, whatever order it was written in. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

export interface CampaignVersionOf {
  /** `<name>@<hash>` */
  versionId: string;
  hash: string;
  spec: CampaignSpec;
}

/**
 * Validates a spec and computes its version id, writing nothing. Throws SpecTooLargeError (one line) for a spec
 * over MAX_SPEC_JSON_BYTES, before validating it, and InvalidSpecError for an invalid one.
 */
export function campaignVersionOf(raw: unknown, where?: string): CampaignVersionOf {
  refuseLarge(raw, where);
  const spec = parseSpec(raw, where);
  const teacherTask = spec.outerLoop.teacher.task;
  const problem = teacherTask === undefined ? undefined : taskTeacherProblem(teacherTask);
  if (problem) throw new InvalidSpecError([problem], where);
  const canonical = canonicalJson(spec);
  refuseLarge(spec, where, canonical);
  const hash = crypto.createHash('sha256').update(canonical).digest('hex').slice(0, 12);
  return { versionId: `${spec.name}@${hash}`, hash, spec };
}

/**
 * The version a spec registers as: `campaignVersionOf` after a custom task's bare dataset and suite names are pinned
 * to their newest versions (services/campaigns/pin-task.ts), so the id is the one registration stores. Writes nothing.
 */
export async function pinnedCampaignVersionOf(db: Db, raw: unknown, where?: string, home?: string): Promise<CampaignVersionOf> {
  const parsed = campaignVersionOf(raw, where);
  const tasked = await pinTaskRefs(db, parsed.spec, where);
  // A recipe folder is imported into FLYWHEEL_HOME's recipe repository and its commit pinned (services/recipes).
  const pinned = tasked.trainer.recipe ? await pinRecipe(tasked, home ?? resolveConfig(process.env, process.cwd()).home, where) : tasked;
  return pinned === parsed.spec ? parsed : campaignVersionOf(pinned, where);
}

function refuseLarge(value: unknown, where: string | undefined, text?: string): void {
  let bytes: number;
  try {
    bytes = Buffer.byteLength(text ?? JSON.stringify(value) ?? '');
  } catch {
    bytes = Infinity; // a cycle or a BigInt: not a spec in any case
  }
  if (bytes <= MAX_SPEC_JSON_BYTES) return;
  const name =
    value !== null && typeof value === 'object' && typeof (value as { name?: unknown }).name === 'string'
      ? ` "${(value as { name: string }).name}"`
      : '';
  const size = bytes === Infinity ? 'not serialisable' : `${(bytes / (1024 * 1024)).toFixed(1)} MB as JSON`;
  throw new SpecTooLargeError(
    `${where ?? 'campaign spec'}${name}: ${size}, more than a campaign spec may be (${MAX_SPEC_JSON_BYTES / 1024} KiB)`,
  );
}

export interface RegisteredVersion {
  versionId: string;
  /** False when the same spec was registered before: nothing new was stored. */
  created: boolean;
  spec: CampaignSpec;
}

/**
 * Registers a spec as a campaign version (the campaign row too, the first time) and makes it the campaign's latest.
 * Every path that stores a spec comes here, so the size cap and the validation hold for all of them. A custom task's
 * dataset and suite are pinned first (pinTaskRefs: a bare name becomes its newest version; an unknown one is a
 * UsageError): the stored spec, and so its hash, hold the exact versions. A recipe folder is imported and its commit
 * pinned (`trainer.recipe.commit`); `home` is FLYWHEEL_HOME, from the environment when left out.
 */
export async function registerCampaignVersion(db: Db, raw: unknown, where?: string, home?: string): Promise<RegisteredVersion> {
  const { versionId, hash, spec } = await pinnedCampaignVersionOf(db, raw, where, home);
  const created = await db.transaction(async (tx) => {
    const commit = spec.trainer.recipe?.commit;
    if (commit) await recordCommit(tx, { campaignId: spec.name, commit, parent: null, origin: 'import' });
    const inserted = await tx
      .insert(campaignVersions)
      .values({ id: versionId, campaignId: spec.name, hash, spec })
      .onConflictDoNothing()
      .returning({ id: campaignVersions.id });
    await tx
      .insert(campaigns)
      .values({ id: spec.name, spec, specHash: hash, latestVersionId: versionId })
      .onConflictDoUpdate({ target: campaigns.id, set: { spec, specHash: hash, latestVersionId: versionId } });
    return inserted.length > 0;
  });
  return { versionId, created, spec };
}

export interface CampaignVersion {
  id: string;
  campaignId: string;
  hash: string;
  spec: CampaignSpec;
  createdAt: Date;
}

/** A stored version, validated; NotFoundError when there is none. */
export async function loadCampaignVersion(db: Db, versionId: string): Promise<CampaignVersion> {
  const [row] = await db.select().from(campaignVersions).where(eq(campaignVersions.id, versionId));
  if (!row)
    throw new NotFoundError(
      `campaign version "${versionId}" does not exist (\`flywheel campaign versions ${campaignIdOfVersion(versionId)}\` lists them)`,
    );
  return {
    id: row.id,
    campaignId: row.campaignId,
    hash: row.hash,
    spec: parseSpec(row.spec, `campaign version "${versionId}"`),
    createdAt: row.createdAt,
  };
}

/** The campaign's latest registered version id, or undefined for a campaign never registered. */
export async function latestCampaignVersionId(db: Db, campaignId: string): Promise<string | undefined> {
  const [row] = await db.select({ latest: campaigns.latestVersionId }).from(campaigns).where(eq(campaigns.id, campaignId));
  return row?.latest ?? undefined;
}

/**
 * A version named by a person: `NAME@HASH` exactly (or a prefix of the hash), or `NAME` alone for the campaign's
 * latest. NotFoundError, naming what was asked, when there is none.
 */
export async function resolveVersionRef(db: Db, ref: string): Promise<string> {
  if (!ref.includes('@')) {
    const latest = await latestCampaignVersionId(db, ref);
    if (!latest) throw new NotFoundError(`unknown campaign "${ref}": no version registered (\`flywheel run SPEC\` registers one)`);
    return latest;
  }
  const campaignId = campaignIdOfVersion(ref);
  const prefix = ref.slice(campaignId.length + 1);
  const rows = await db
    .select({ id: campaignVersions.id })
    .from(campaignVersions)
    .where(and(eq(campaignVersions.campaignId, campaignId), like(campaignVersions.hash, prefix.replace(/[\\%_]/g, '\\$&') + '%')));
  if (rows.length === 1 && prefix.length > 0) return rows[0].id;
  if (rows.length > 1) throw new NotFoundError(`"${ref}" names ${rows.length} versions of "${campaignId}": give more of the hash`);
  throw new NotFoundError(`unknown campaign version "${ref}" (\`flywheel campaign versions ${campaignId}\` lists them)`);
}

export interface VersionListing {
  id: string;
  createdAt: Date;
  latest: boolean;
  /** The inner loops that ran (or run) it, oldest first. */
  innerLoops: string[];
  /** The outer iterations (attempts) that ran it. */
  outerIterations: string[];
}

/** Every version of a campaign, newest first, with the loops that ran each. */
export async function listCampaignVersions(db: Db, campaignId: string): Promise<VersionListing[]> {
  const latest = await latestCampaignVersionId(db, campaignId);
  const versions = await db
    .select({ id: campaignVersions.id, createdAt: campaignVersions.createdAt })
    .from(campaignVersions)
    .where(eq(campaignVersions.campaignId, campaignId))
    .orderBy(desc(campaignVersions.createdAt), desc(campaignVersions.id));
  const loops = await db
    .select({ id: innerLoops.id, v: innerLoops.campaignVersionId })
    .from(innerLoops)
    .where(eq(innerLoops.campaignId, campaignId))
    .orderBy(innerLoops.createdAt);
  const outer = await db
    .select({ id: outerIterations.id, v: outerIterations.campaignVersionId })
    .from(outerIterations)
    .where(eq(outerIterations.campaignId, campaignId))
    .orderBy(outerIterations.createdAt);
  return versions.map((v) => ({
    id: v.id,
    createdAt: v.createdAt,
    latest: v.id === latest,
    innerLoops: loops.filter((l) => l.v === v.id).map((l) => l.id),
    outerIterations: outer.filter((o) => o.v === v.id).map((o) => o.id),
  }));
}
