// Optional encryption of every workflow payload (inputs, results, signals, queries, memos, heartbeat details, and
// failure messages, see data-converter.ts) with AES-256-GCM, so a Temporal server operator or a leaked history sees
// ciphertext only. The key comes from FLYWHEEL_PAYLOAD_KEY: `id:base64key[,oldId:base64key…]`; the first key
// encrypts, every listed key decrypts (rotation: prepend the new key, drop an old one once no history needs it).
import crypto from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { UsageError } from '../core/errors';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID = 'encryption-key-id';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A malformed FLYWHEEL_PAYLOAD_KEY, or a payload that no configured key can open. */
export class PayloadKeyError extends UsageError {}

export interface PayloadKey {
  id: string;
  key: Buffer;
}

/** Parses `id:base64[,id:base64…]`; each key must be 32 bytes (AES-256). Never echoes key material in an error. */
export function parsePayloadKeys(spec: string): PayloadKey[] {
  const keys = spec.split(',').map((part, i) => {
    const m = /^\s*([A-Za-z0-9._-]{1,64}):([A-Za-z0-9+/=_-]+)\s*$/.exec(part);
    if (!m) throw new PayloadKeyError(`FLYWHEEL_PAYLOAD_KEY entry ${i + 1}: expected "id:base64key" (id of letters, digits, ._-)`);
    const key = Buffer.from(m[2], 'base64');
    if (key.length !== 32)
      throw new PayloadKeyError(
        `FLYWHEEL_PAYLOAD_KEY entry ${i + 1} (id "${m[1]}"): key must be 32 bytes of base64, got ${key.length} bytes`,
      );
    return { id: m[1], key };
  });
  const ids = new Set(keys.map((k) => k.id));
  if (ids.size !== keys.length) throw new PayloadKeyError('FLYWHEEL_PAYLOAD_KEY: the same key id appears twice');
  return keys;
}

/** Encrypts each payload whole (metadata and data) into one `binary/encrypted` payload tagged with the key id. */
export class AesGcmPayloadCodec implements PayloadCodec {
  private readonly byId: Map<string, Buffer>;
  constructor(private readonly keys: PayloadKey[]) {
    if (!keys.length) throw new PayloadKeyError('AesGcmPayloadCodec needs at least one key');
    this.byId = new Map(keys.map((k) => [k.id, k.key]));
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const { id, key } = this.keys[0];
    return payloads.map((p) => {
      const iv = crypto.randomBytes(IV_BYTES);
      const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
      // The key id is authenticated too: a payload relabelled with another id fails to decrypt.
      cipher.setAAD(Buffer.from(id));
      const body = Buffer.concat([cipher.update(serialize(p)), cipher.final()]);
      return {
        metadata: { encoding: Buffer.from(ENCRYPTED_ENCODING), [KEY_ID]: Buffer.from(id) },
        data: Buffer.concat([iv, body, cipher.getAuthTag()]),
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => {
      if (Buffer.from(p.metadata?.encoding ?? []).toString() !== ENCRYPTED_ENCODING) return p;
      const id = Buffer.from(p.metadata?.[KEY_ID] ?? []).toString();
      const key = this.byId.get(id);
      if (!key) throw new PayloadKeyError(`payload encrypted with key id "${id}", which FLYWHEEL_PAYLOAD_KEY does not hold`);
      const data = Buffer.from(p.data ?? []);
      if (data.length < IV_BYTES + TAG_BYTES) throw new PayloadKeyError(`encrypted payload (key id "${id}") is truncated`);
      const decipher = crypto.createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(id));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      try {
        return deserialize(Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]));
      } catch {
        throw new PayloadKeyError(`encrypted payload (key id "${id}") fails authentication: wrong key or tampered data`);
      }
    });
  }
}

// A payload as JSON with base64 bytes: the inner format only Flywheel's codec reads, so no protobuf is needed.
function serialize(p: Payload): Buffer {
  const metadata = Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? []).toString('base64')]));
  return Buffer.from(JSON.stringify({ metadata, data: Buffer.from(p.data ?? []).toString('base64') }));
}

function deserialize(b: Buffer): Payload {
  const j = JSON.parse(b.toString('utf8')) as { metadata: Record<string, string>; data: string };
  return {
    metadata: Object.fromEntries(Object.entries(j.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
    data: Buffer.from(j.data, 'base64'),
  };
}
