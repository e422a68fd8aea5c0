// What every activity receives (dependency injection): the database, the local state folder, a clock, the teacher.
// Tests hand in a real database on the test server and a scratch folder.
import type { Teacher } from '../agents/teacher';
import type { CampaignSpec } from '../core/spec';
import type { Db } from '../db/client';

export interface ActivityDeps {
  db: Db;
  /** FLYWHEEL_HOME: runs, datasets and eval scratch live under it. */
  home: string;
  /** Defaults to Date.now; injectable so tests can pin time-dependent rows. */
  now?: () => number;
  /**
   * Whether a workflow execution is still running (the outer loop's claim asks it before taking over an iteration
   * whose owner may be gone). Absent: every owner counts as alive, so a stale claim is skipped, never run twice.
   */
  isWorkflowRunning?: (workflowId: string) => Promise<boolean>;
  /**
   * The teacher of a campaign's critique steps. Tests hand in a model teacher pointed at a local server.
   * @default teacherFor(spec, process.env): the spec's `outerLoop.teacher.model` when the environment has an endpoint, else the built-in teacher
   */
  teacher?: (spec: CampaignSpec) => Teacher;
}
