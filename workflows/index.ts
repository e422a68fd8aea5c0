// The workflow types the orchestration worker registers.
export { innerLoop } from './inner-loop';
export { experiment } from './experiment';
export { outerLoop } from './outer-loop';
