// Flywheel's errors say whether retrying can help, and the activity boundary turns that into Temporal's retry rule;
// the CLI's exit code 2 follows the UsageError class. No list of names is kept anywhere.
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { withRetryBoundary } from '../../activities/retry-boundary';
import { InvalidWeightsError } from '../../activities/outer/build-dataset-version';
import {
  AgentRequestError,
  AgentUnavailableError,
  NotACompletionError,
  TokenBudgetExceededError,
  UnusableReplyError,
} from '../../agents/agent-errors';
import { SandboxUnavailableError } from '../../backends/sandbox/sandbox';
import { TrainerProgramNotFoundError } from '../../backends/sandbox/program-paths';
import { EXIT_FAILURE, EXIT_USAGE, exitCodeFor } from '../../cli/errors';
import { SpecFileError } from '../../cli/spec-file';
import {
  BudgetExceededError,
  ChecksumMismatchError,
  ContaminatedDatasetError,
  ContractViolationError,
  FlywheelError,
  LoopFailedError,
  NotFoundError,
  PredictionsMismatchError,
  UsageError,
} from '../../core/errors';
import { MalformedSuiteError } from '../../core/eval-suite/suite-schema';
import { InvalidFeedbackError } from '../../core/feedback';
import { InvalidSpecError } from '../../core/spec-errors';
import { CheckpointFormatError } from '../../formats/charlm/checkpoint';
import {
  ConflictingCopiesError,
  DatabaseUnavailableError,
  FeedbackConflictError,
  UnknownCampaignError,
} from '../../services/feedback-store';
import { InvalidSimulationError } from '../../services/simulate-users';
import { CorpusLicenseError } from '../../tasks/builtin-code/corpus';
import { PayloadKeyError } from '../../temporal/payload-codec';
import { TemporalAddressMissingError } from '../../temporal/temporal-connection';
import { DatabaseUrlMissingError } from '../../workers/main';

const REPO = path.join(__dirname, '..', '..');

test('an error is named for its class and carries its cause', () => {
  const cause = new Error('EACCES');
  const e = new CorpusLicenseError('left-pad: no LICENSE file in the package', { cause });
  expect(e).toBeInstanceOf(FlywheelError);
  expect(e.name).toBe('CorpusLicenseError');
  expect(e.cause).toBe(cause);
  expect(String(e)).toBe('CorpusLicenseError: left-pad: no LICENSE file in the package');
  expect(new InvalidSpecError(['a: bad']).name).toBe('InvalidSpecError');
});

test('the classes say whether retrying can help', () => {
  const never = [
    CorpusLicenseError,
    CheckpointFormatError,
    BudgetExceededError,
    NotFoundError,
    ChecksumMismatchError,
    PredictionsMismatchError,
    ContractViolationError,
    InvalidWeightsError,
    ContaminatedDatasetError,
    MalformedSuiteError,
    AgentRequestError,
    UnusableReplyError,
    TokenBudgetExceededError,
    SandboxUnavailableError,
    TrainerProgramNotFoundError,
  ];
  for (const E of never) expect([E.name, new E('x').retryable]).toEqual([E.name, false]);
  expect(new InvalidSpecError(['a: bad']).retryable).toBe(false);
  expect(new InvalidFeedbackError(['p']).retryable).toBe(false);
  expect(new FeedbackConflictError(['id']).retryable).toBe(false);
  expect(new ConflictingCopiesError(['id']).retryable).toBe(false);
  expect(new UnknownCampaignError(['c']).retryable).toBe(false);
  for (const E of [AgentUnavailableError, NotACompletionError, DatabaseUnavailableError])
    expect([E.name, new E('x').retryable]).toEqual([E.name, true]);
});

test('at the activity boundary a non-retryable error becomes a non-retryable failure of the same type; others pass as they are', async () => {
  const cause = new Error('bad magic');
  const thrown = new CheckpointFormatError('not a charlm-v1 checkpoint', { cause });
  const failure = await withRetryBoundary(async () => Promise.reject(thrown))(undefined).catch((e: unknown) => e);
  expect(failure).toBeInstanceOf(ApplicationFailure);
  expect(failure).toMatchObject({
    type: 'CheckpointFormatError',
    nonRetryable: true,
    message: 'not a charlm-v1 checkpoint',
    cause,
    stack: thrown.stack,
  });

  for (const e of [new AgentUnavailableError('HTTP 503'), new Error('ECONNRESET')]) {
    await expect(withRetryBoundary(async () => Promise.reject(e))(undefined)).rejects.toBe(e);
  }
  await expect(withRetryBoundary(async (n: number) => n + 1)(1)).resolves.toBe(2);
});

test('exit code 2 for every UsageError, 1 for the rest', () => {
  const usage = [
    new UsageError('x'),
    new InvalidSpecError(['a: bad']),
    new SpecFileError('x'),
    new DatabaseUrlMissingError('x'),
    new TemporalAddressMissingError('x'),
    new InvalidSimulationError('x'),
    new PayloadKeyError('x'),
  ];
  for (const e of usage) expect([e.name, exitCodeFor(e)]).toEqual([e.name, EXIT_USAGE]);
  for (const e of [new LoopFailedError('x'), new CorpusLicenseError('x'), new Error('x')])
    expect([e.name, exitCodeFor(e)]).toEqual([e.name, EXIT_FAILURE]);
});

test('every error class of the tree extends FlywheelError', () => {
  // Every room of the tree (test/ and bench/ hold their own stand-ins and are not Flywheel's errors).
  const dirs = fs
    .readdirSync(REPO, { withFileTypes: true })
    .filter(
      (d) =>
        d.isDirectory() && !d.name.startsWith('.') && !['node_modules', 'test', 'bench', 'docs', 'bin', 'test-artifacts'].includes(d.name),
    )
    .map((d) => d.name);
  expect(dirs).toEqual(expect.arrayContaining(['activities', 'core', 'tasks', 'formats', 'trainers', 'server']));
  const hits = execFileSync('grep', ['-rnE', '--include=*.ts', 'extends (Error|TypeError|RangeError)\\b', ...dirs], {
    cwd: REPO,
    encoding: 'utf8',
  })
    .trim()
    .split('\n');
  expect(hits).toEqual([expect.stringMatching(/^core\/errors\.ts:\d+:export class FlywheelError extends Error \{$/)]);
});
