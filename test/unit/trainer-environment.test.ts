// The trainer's environment allow-list (core/trainer-environment.ts) and the spec's refusal of a declared secret.
import { InvalidSpecError } from '../../core/spec';
import { parseSpec } from '../../tasks/task-spec';
import { holdsCredential, isSecretName, trainerEnvironment } from '../../core/trainer-environment';

const WORKER = {
  PATH: '/usr/bin:/bin',
  HOME: '/root',
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  OMP_NUM_THREADS: '2',
  OPENBLAS_CORETYPE: 'Haswell',
  CUDA_VISIBLE_DEVICES: '0,1',
  NCCL_DEBUG: 'INFO',
  FLYWHEEL_TORCH_THREADS: '1',
  FLYWHEEL_API_TOKEN: 'tok-secret',
  FLYWHEEL_PAYLOAD_KEY: 'k1:secret',
  FLYWHEEL_HOME: '/srv/flywheel',
  OPENAI_API_KEY: 'sk-secret',
  OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
  DATABASE_URL: 'postgres://flywheel:pw@db/flywheel',
  PGPASSWORD: 'pw',
  TEMPORAL_ADDRESS: 'temporal:7233',
  TEMPORAL_TLS_KEY: 'key',
  SMTP_PASSWORD: 'pw',
  HF_TOKEN: 'hf-mine',
  AWS_REGION: 'eu-west-1',
  NCCL_SOCKET_URL: 'http://user:pw@host/', // an allowed prefix does not let a URL password through
};

test('a trainer gets the allow-listed worker variables and nothing else', () => {
  expect(trainerEnvironment(WORKER, { env: {}, passEnv: [] })).toEqual({
    PATH: '/usr/bin:/bin',
    HOME: '/root',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    OMP_NUM_THREADS: '2',
    OPENBLAS_CORETYPE: 'Haswell',
    CUDA_VISIBLE_DEVICES: '0,1',
    NCCL_DEBUG: 'INFO',
    FLYWHEEL_TORCH_THREADS: '1',
  });
});

test('passEnv and env add what the spec declares; a secret stays out whoever names it', () => {
  const env = trainerEnvironment(WORKER, {
    env: { HF_HUB_OFFLINE: '1', DATABASE_URL: 'x' },
    passEnv: ['HF_TOKEN', 'AWS_REGION', 'OPENAI_API_KEY', 'SMTP_PASSWORD'],
  });
  expect(env).toMatchObject({ HF_TOKEN: 'hf-mine', AWS_REGION: 'eu-west-1', HF_HUB_OFFLINE: '1' });
  for (const name of ['DATABASE_URL', 'OPENAI_API_KEY', 'SMTP_PASSWORD']) expect(env).not.toHaveProperty(name);
});

test('secret names and credentials in values', () => {
  for (const n of [
    'FLYWHEEL_API_TOKEN',
    'FLYWHEEL_PAYLOAD_KEY',
    'FLYWHEEL_HOME',
    'OPENAI_API_KEY',
    'DATABASE_URL',
    'PGPASSWORD',
    'PGHOST',
    'TEMPORAL_ADDRESS',
    'MY_DB_PASSWORD',
  ]) {
    expect(isSecretName(n)).toBe(true);
  }
  for (const n of ['FLYWHEEL_TORCH_THREADS', 'FLYWHEEL_PEAK_FLOPS', 'HF_TOKEN', 'PATH', 'CUDA_VISIBLE_DEVICES'])
    expect(isSecretName(n)).toBe(false);
  expect(holdsCredential('postgres://u:pw@h:5432/db')).toBe(true);
  expect(holdsCredential('https://mirror.example/simple')).toBe(false);
  expect(holdsCredential('http://u@h/')).toBe(false);
});

test('validate refuses a Flywheel or agent secret declared for the trainer, one line each', () => {
  const spec = (trainer: Record<string, unknown>) => ({ name: 'x', searchSpace: { a: { type: 'categorical', choices: [1] } }, trainer });
  expect(() => parseSpec(spec({ env: { HF_HUB_OFFLINE: '1' }, passEnv: ['HF_TOKEN'] }))).not.toThrow();
  let err: unknown;
  try {
    parseSpec(spec({ env: { OPENAI_API_KEY: 'sk', MIRROR: 'https://u:p@m/' }, passEnv: ['DATABASE_URL'] }), 'spec.yaml');
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(InvalidSpecError);
  expect((err as InvalidSpecError).problems).toEqual([
    "trainer.env.OPENAI_API_KEY: is a Flywheel or agent secret's name; trainers never see one",
    'trainer.env.MIRROR: holds a URL with a password; trainers never see one',
    `trainer.passEnv.0: "DATABASE_URL" is a Flywheel or agent secret's name; trainers never see one`,
  ]);
});
