// UTF-8 as bytes: a string's length in bytes without encoding it, and the offset (and line) where bytes stop being
// UTF-8, which suite and dataset refusals name.
import { decodeUtf8, firstBadUtf8Byte, utf8ByteLength } from '../../core/utf8-bytes';

test.each(['', 'abc', 'héllo', 'a€b', '😀x', 'x\ud800y', '\udc00', 'z'.repeat(1000) + '€😀é'])(
  'utf8ByteLength(%j) is what Buffer encodes',
  (s) => {
    expect(utf8ByteLength(s)).toBe(Buffer.byteLength(s, 'utf8'));
  },
);

test.each([
  ['ASCII', Buffer.from('plain text\n'), -1],
  ['multi-byte characters', Buffer.from('héllo € 😀'), -1],
  ['a stray continuation byte', Buffer.from([0x61, 0x62, 0x80, 0x63]), 2],
  ['a lead byte without its continuation', Buffer.from([0x61, 0xc3, 0x41]), 1],
  ['a sequence cut at the end', Buffer.from([0x61, 0x62, 0xe2, 0x82]), 2],
  ['an overlong form', Buffer.from([0x61, 0xc0, 0xaf]), 1],
  ['an encoded surrogate', Buffer.from([0x61, 0xed, 0xa0, 0x80]), 1],
  ['a code point past U+10FFFF', Buffer.from([0xf4, 0x90, 0x80, 0x80]), 0],
  ['Latin-1 after valid text', Buffer.concat([Buffer.from('é€'), Buffer.from([0xe9])]), 5],
] as const)('firstBadUtf8Byte: %s', (_what, bytes, at) => {
  expect(firstBadUtf8Byte(bytes)).toBe(at);
});

test('decodeUtf8 returns the text, or the offset and line of the first bad byte', () => {
  expect(decodeUtf8(Buffer.from('a\nb'))).toEqual({ text: 'a\nb' });
  expect(decodeUtf8(Buffer.concat([Buffer.from('one\ntwo\nth'), Buffer.from([0xff]), Buffer.from('ree\n')]))).toEqual({
    offset: 10,
    line: 3,
  });
});
