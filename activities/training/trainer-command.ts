// The trainer's argv for one entry point (core/trainer-program.ts), re-exported for the activities and their tests.
export { BUILTIN_TRAINER, HF_TRAINER, HF_TRAINER_DIR, REPO, trainerArgv, trainerBase } from '../../core/trainer-program';
