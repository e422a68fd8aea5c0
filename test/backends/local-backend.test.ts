// The local backend (detached process groups on the worker's host) against the shared backend conformance suite.
import { LocalBackend } from '../../backends/local/local-backend';
import { backendConformance } from './conformance';

backendConformance({
  kind: 'local',
  make: () => new LocalBackend(),
  backendSpec: { kind: 'local' },
  // The local backend has no limit of its own: awaitTraining enforces the spec's trainingTimeoutSeconds.
  timeLimited: (spec) => ({ ...spec, innerLoop: { ...spec.innerLoop, trainingTimeoutSeconds: 3 } }),
  skip: { preemption: 'nothing preempts a local process; a crashed one is a failure, relaunched as a new attempt' },
});
