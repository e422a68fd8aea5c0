// The AES-GCM payload codec alone: round trip, key rotation, and the errors for a wrong key, tampering and bad keys.
import crypto from 'node:crypto';
import type { Payload } from '@temporalio/common';
import { AesGcmPayloadCodec, ENCRYPTED_ENCODING, parsePayloadKeys, PayloadKeyError } from '../../temporal/payload-codec';

const key = (id: string): string => `${id}:${crypto.randomBytes(32).toString('base64')}`;
const plain: Payload = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('{"campaignId":"c-1"}') };
const text = (b: Uint8Array | null | undefined): string => Buffer.from(b ?? []).toString();

test('a payload round-trips; the ciphertext names its key and hides the content', async () => {
  const codec = new AesGcmPayloadCodec(parsePayloadKeys(key('k1')));
  const [enc] = await codec.encode([plain]);
  expect(text(enc.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
  expect(text(enc.metadata!['encryption-key-id'])).toBe('k1');
  expect(text(enc.data)).not.toContain('campaignId');
  const [dec] = await codec.decode([enc]);
  expect(text(dec.metadata!.encoding)).toBe('json/plain');
  expect(text(dec.data)).toBe('{"campaignId":"c-1"}');
  // Two encodings of one payload differ (a fresh IV each time).
  expect(text((await codec.encode([plain]))[0].data)).not.toBe(text(enc.data));
});

test('rotation: the first key encrypts, every listed key decrypts', async () => {
  const old = key('old');
  const fresh = key('new');
  const [byOld] = await new AesGcmPayloadCodec(parsePayloadKeys(old)).encode([plain]);
  const rotated = new AesGcmPayloadCodec(parsePayloadKeys(`${fresh},${old}`));
  expect(text((await rotated.decode([byOld]))[0].data)).toBe(text(plain.data));
  const [byNew] = await rotated.encode([plain]);
  expect(text(byNew.metadata!['encryption-key-id'])).toBe('new');
  await expect(new AesGcmPayloadCodec(parsePayloadKeys(fresh)).decode([byOld])).rejects.toThrow(
    'payload encrypted with key id "old", which FLYWHEEL_PAYLOAD_KEY does not hold',
  );
});

test('a tampered payload, a relabelled key id and a wrong key with the same id fail authentication', async () => {
  const codec = new AesGcmPayloadCodec(parsePayloadKeys(key('k1')));
  const [enc] = await codec.encode([plain]);
  const flipped = Buffer.from(enc.data!);
  flipped[20] ^= 1;
  await expect(codec.decode([{ ...enc, data: flipped }])).rejects.toThrow(/fails authentication/);
  await expect(new AesGcmPayloadCodec(parsePayloadKeys(key('k1'))).decode([enc])).rejects.toThrow(/fails authentication/);
  const twoKeys = new AesGcmPayloadCodec(parsePayloadKeys(`${key('k2')},${key('k1')}`));
  await expect(twoKeys.decode([{ ...enc, metadata: { ...enc.metadata, 'encryption-key-id': Buffer.from('k2') } }])).rejects.toThrow(
    /fails authentication/,
  );
  await expect(codec.decode([{ ...enc, data: Buffer.alloc(5) }])).rejects.toThrow(/truncated/);
});

test('plaintext payloads pass through decode unchanged (histories from before the key was set)', async () => {
  const codec = new AesGcmPayloadCodec(parsePayloadKeys(key('k1')));
  expect(await codec.decode([plain])).toEqual([plain]);
});

test.each([
  ['no id', crypto.randomBytes(32).toString('base64'), /entry 1: expected "id:base64key"/],
  ['a short key', 'k1:' + crypto.randomBytes(16).toString('base64'), /entry 1 \(id "k1"\): key must be 32 bytes of base64, got 16 bytes/],
  ['a bad second entry', `${key('a')},b:`, /entry 2: expected/],
  ['a repeated id', `${key('a')},${key('a')}`, /the same key id appears twice/],
])('a malformed FLYWHEEL_PAYLOAD_KEY (%s) is one line that does not echo the key', (_what, spec, message) => {
  const err = (() => {
    try {
      parsePayloadKeys(spec);
    } catch (e) {
      return e as Error;
    }
  })();
  expect(err).toBeInstanceOf(PayloadKeyError);
  expect(err!.message).toMatch(message);
  expect(err!.message).not.toContain('\n');
  for (const part of spec.split(/[,:]/).filter((p) => p.length > 8)) expect(err!.message).not.toContain(part);
});
