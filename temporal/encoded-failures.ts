// The failure converter of an encrypted Flywheel (FLYWHEEL_PAYLOAD_KEY set): a failure's message and stack trace travel
// as a payload, which the codec encrypts, and the history keeps only "Encoded failure". The SDK loads a failure
// converter by path only (the worker for activities, the workflow bundle for workflow code), hence a module of its own.
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
