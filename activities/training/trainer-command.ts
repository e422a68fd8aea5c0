// The trainer's argv for one entry point (backends/trainer-programs.ts), re-exported for the activities and their tests.
export { BUILTIN_TRAINER, HF_TRAINER, HF_TRAINER_DIR, REPO, trainerArgv, trainerBase } from '../../backends/trainer-programs';
