// The environment a trainer's `train` and `predict` get: an allow-list of the worker's variables (PATH, HOME,
// locale, thread counts, GPU runtime settings) plus what the spec declares, and never a Flywheel or agent secret.
// Pure: the backends and the eval activity build the environment from it; parseSpec refuses a declared secret.

/** Worker variables every trainer gets, by exact name. */
const ALLOWED_NAMES = new Set([
  'PATH',
  'HOME',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TMPDIR',
  'OMP_NUM_THREADS',
  'MKL_NUM_THREADS',
  'OPENBLAS_NUM_THREADS',
  'NUMEXPR_NUM_THREADS',
  'VECLIB_MAXIMUM_THREADS',
  'TOKENIZERS_PARALLELISM',
  // Older OpenBLAS builds compute wrong results on some processors without these (set by the host, not secrets).
  'OPENBLAS_CORETYPE',
  'OPENBLAS_L2_SIZE',
  // Knobs of Flywheel's own reference trainers: numbers, not secrets.
  'FLYWHEEL_TORCH_THREADS',
  'FLYWHEEL_PEAK_FLOPS',
  'ROCR_VISIBLE_DEVICES',
  'HIP_VISIBLE_DEVICES',
]);

/** Worker variables every trainer gets, by prefix: locale and the GPU runtimes' settings. */
const ALLOWED_PREFIXES = ['LC_', 'CUDA_', 'NCCL_', 'NVIDIA_'];

/**
 * Names that hold Flywheel's or an agent's secrets, or a password: never in a trainer's environment, whether from
 * the worker or declared in the spec. Every FLYWHEEL_ variable counts, but the two trainer knobs above.
 */
const SECRET_NAME = [/^FLYWHEEL_/, /^OPENAI_/, /^ANTHROPIC_/, /^DATABASE_URL$/, /^PG[A-Z]*$/, /^TEMPORAL_/, /PASSWORD|PASSWD/i];

/** A URL with a password in it (`postgres://user:pw@host`): a credential whatever the variable is called. */
const CREDENTIAL_IN_URL = /[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:[^/\s@]+@/i;

export function isSecretName(name: string): boolean {
  return !ALLOWED_NAMES.has(name) && SECRET_NAME.some((re) => re.test(name));
}

export function holdsCredential(value: string): boolean {
  return CREDENTIAL_IN_URL.test(value);
}

function allowedFromWorker(name: string): boolean {
  return ALLOWED_NAMES.has(name) || ALLOWED_PREFIXES.some((p) => name.startsWith(p));
}

/** What a campaign's spec declares for its trainer's environment (`trainer.env`, `trainer.passEnv`). */
export interface DeclaredEnvironment {
  env: Record<string, string>;
  passEnv: string[];
}

/** Problems with a declared environment, as `trainer.env.NAME: …` lines (empty when it is fine). */
export function declaredEnvironmentProblems(d: DeclaredEnvironment): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(d.env)) {
    if (isSecretName(name)) problems.push(`trainer.env.${name}: is a Flywheel or agent secret's name; trainers never see one`);
    else if (holdsCredential(value)) problems.push(`trainer.env.${name}: holds a URL with a password; trainers never see one`);
  }
  d.passEnv.forEach((name, i) => {
    if (isSecretName(name)) problems.push(`trainer.passEnv.${i}: "${name}" is a Flywheel or agent secret's name; trainers never see one`);
  });
  return problems;
}

/**
 * The trainer's environment: the allow-listed worker variables, the passed-through ones, then the declared values.
 * A secret's name or a value holding a URL password is dropped wherever it comes from.
 */
export function trainerEnvironment(worker: Record<string, string | undefined>, declared: DeclaredEnvironment): Record<string, string> {
  const env: Record<string, string> = {};
  const take = (name: string, value: string | undefined) => {
    if (value === undefined || isSecretName(name) || holdsCredential(value)) return;
    env[name] = value;
  };
  for (const [name, value] of Object.entries(worker)) if (allowedFromWorker(name)) take(name, value);
  for (const name of declared.passEnv) take(name, worker[name]);
  for (const [name, value] of Object.entries(declared.env)) take(name, value);
  return env;
}
