// The data converter of every Flywheel client and worker, built in this one place so both sides always match: the
// SDK's default, or, with FLYWHEEL_PAYLOAD_KEY set, the AES-GCM codec on every payload and failures whose message
// and stack trace are encoded into a payload too (so the codec encrypts them as well).
import type { DataConverter } from '@temporalio/common';
import { AesGcmPayloadCodec, parsePayloadKeys } from './payload-codec';

/** The module exporting the encoding `failureConverter`; a workflow bundle for an encrypted stack is built with it. */
export const ENCODED_FAILURES_PATH = require.resolve('./encoded-failures');

/** undefined (the SDK's default) without keys. */
export function flywheelDataConverter(payloadKeys: string | undefined): DataConverter | undefined {
  if (!payloadKeys) return undefined;
  return { payloadCodecs: [new AesGcmPayloadCodec(parsePayloadKeys(payloadKeys))], failureConverterPath: ENCODED_FAILURES_PATH };
}
