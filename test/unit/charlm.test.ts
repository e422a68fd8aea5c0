// The built-in model: its hand-written backward pass against finite differences, that training really
// lowers held-out bits per byte, the checkpoint format, bit-for-bit resume, and the knob validation.
import fs from 'node:fs';
import path from 'node:path';
import { Rng } from '../../core/stream-rng';
import {
  CharLm,
  CheckpointFormatError,
  VOCAB_SIZE,
  bitsPerByte,
  decodeCheckpoint,
  encodeCheckpoint,
  encodeText,
  greedyComplete,
  type CharLmCheckpoint,
} from '../../formats/charlm/model';
import { InvalidTrainParamsError, resolveTrainParams, trainCharLm } from '../../trainers/charlm/train';
import { learningRate } from '../../trainers/charlm/train-params';
import type { MetricLine } from '../../core/job-contract';

const NM = path.join(__dirname, '..', '..', 'node_modules');
const srcDir = path.join(NM, '@temporalio', 'workflow', 'src');
const TRAIN_TEXT = fs
  .readdirSync(srcDir)
  .filter((f) => f.endsWith('.ts'))
  .sort()
  .map((f) => fs.readFileSync(path.join(srcDir, f), 'utf8'))
  .join('\n');
const HELD_OUT = fs.readFileSync(path.join(NM, '@temporalio', 'client', 'src', 'errors.ts'), 'utf8').slice(0, 3000);

const SMALL = { context: 4, embed: 8, hidden: 32, batchSize: 32, lr: 0.02, logEvery: 10 };

describe('CharLm backward pass', () => {
  test('matches central finite differences for every parameter of a tiny model', () => {
    const hyper = { context: 3, embed: 4, hidden: 5 };
    const model = CharLm.create(hyper, 3);
    const rng = new Rng(11);
    // Spread the weights so tanh is not linear and every tensor's gradient is non-trivial.
    for (let i = 0; i < model.params.length; i++) model.params[i] += (rng.next() - 0.5) * 0.6;
    const count = 6; // not a multiple of the 4-row block: the padded tail must add nothing
    const ids = [5, 40, 41, 3, 77, 12, 5, 40, 9];
    const contexts = new Int32Array(count * 3).map((_, i) => ids[(i * 7) % ids.length]);
    const targets = Int32Array.from([12, 41, 5, 3, 90, 40]);
    const loss = (): number => model.accumulateGradient(contexts, targets, count, model.zerosLike(), 1);
    const grad = model.zerosLike();
    model.accumulateGradient(contexts, targets, count, grad, 1);

    const L = model.layout;
    const eps = 1e-2;
    let checked = 0;
    for (let i = 0; i < model.params.length; i++) {
      const orig = model.params[i];
      model.params[i] = orig + eps;
      const up = loss();
      const hi = model.params[i];
      model.params[i] = orig - eps;
      const down = loss();
      const lo = model.params[i];
      model.params[i] = orig;
      const numeric = (up - down) / (hi - lo);
      expect(Math.abs(numeric - grad[i])).toBeLessThan(2e-4 + 1e-3 * Math.abs(grad[i]));
      if (Math.abs(grad[i]) > 1e-3) checked++;
    }
    expect(checked).toBeGreaterThan(model.params.length / 2); // most gradients are far from zero: not a vacuous check
    expect(grad[L.emb + 60 * 4]).toBe(0); // an embedding row no context uses
  });

  test('scale multiplies the gradient and the returned loss is the summed cross-entropy', () => {
    const model = CharLm.create({ context: 2, embed: 3, hidden: 4 }, 1);
    const ctx = Int32Array.from([4, 5, 6, 7]);
    const tgt = Int32Array.from([8, 9]);
    const g1 = model.zerosLike();
    const g2 = model.zerosLike();
    const nats = model.accumulateGradient(ctx, tgt, 2, g1, 1);
    model.accumulateGradient(ctx, tgt, 2, g2, 0.5);
    for (let i = 0; i < g1.length; i++) expect(g2[i]).toBeCloseTo(g1[i] * 0.5, 6);
    const direct = -model.logProbNext([4, 5], 2, 8) - model.logProbNext([6, 7], 2, 9);
    expect(nats).toBeCloseTo(direct, 6);
  });
});

describe('scoring', () => {
  test('bitsPerByte sums -log2 p of each continuation byte given everything before it', () => {
    const model = CharLm.create({ context: 3, embed: 4, hidden: 8 }, 2);
    const prompt = 'const x';
    const cont = ' = 1;\n';
    const ids = encodeText(prompt + cont);
    let bits = 0;
    for (let i = prompt.length; i < ids.length; i++) bits -= model.logProbNext(ids, i, ids[i]) / Math.LN2;
    const r = bitsPerByte(model, prompt, cont);
    expect(r.bytes).toBe(cont.length);
    expect(r.bits).toBeCloseTo(bits, 9);
    // Non-ASCII is scored per UTF-8 byte.
    expect(bitsPerByte(model, '', 'é').bytes).toBe(2);
  });

  test('an untrained model is close to uniform over the vocabulary', () => {
    const model = CharLm.create({ context: 4, embed: 8, hidden: 32 }, 1);
    const r = bitsPerByte(model, '', HELD_OUT);
    expect(r.bits / r.bytes).toBeGreaterThan(Math.log2(VOCAB_SIZE) - 0.3);
  });

  test('greedyComplete is deterministic, printable and at most maxBytes long', () => {
    const model = CharLm.create({ context: 4, embed: 8, hidden: 16 }, 5);
    const a = greedyComplete(model, 'function f(', 12);
    expect(a).toBe(greedyComplete(model, 'function f(', 12));
    expect(a.length).toBeLessThanOrEqual(12);
    expect(a).toMatch(/^[\x20-\x7e\n\t]*$/);
    expect(greedyComplete(model, 'x', 0)).toBe('');
  });
});

describe('training', () => {
  test('lowers held-out bits per byte clearly below the untrained model', () => {
    const params = { ...SMALL, steps: 400 };
    const untrained = CharLm.create({ context: 4, embed: 8, hidden: 32 }, 1);
    const before = bitsPerByte(untrained, '', HELD_OUT);
    const lines: MetricLine[] = [];
    const { model } = trainCharLm({ text: TRAIN_TEXT, params, seed: 1, onMetrics: (l) => lines.push(l) });
    const after = bitsPerByte(model, '', HELD_OUT);
    expect(before.bits / before.bytes).toBeGreaterThan(6.3);
    expect(after.bits / after.bytes).toBeLessThan(4.2);
    expect(lines.map((l) => l.step)).toEqual(Array.from({ length: 40 }, (_, i) => (i + 1) * 10));
    expect(lines[lines.length - 1].loss).toBeLessThan(lines[0].loss - 1);
    for (const l of lines) expect(Object.keys(l).sort()).toEqual(['loss', 'lr', 'step', 'tokens', 'tokens_per_s']);
  });

  test('a resumed run is bit-for-bit the uninterrupted one', () => {
    const params = { ...SMALL, steps: 60, batchSize: 6 };
    const full: CharLmCheckpoint[] = [];
    const fullLines: MetricLine[] = [];
    const whole = trainCharLm({
      text: TRAIN_TEXT,
      params,
      seed: 9,
      checkpointEvery: 20,
      onCheckpoint: (c) => full.push(c),
      onMetrics: (l) => fullLines.push(l),
    });
    expect(full.map((c) => c.step)).toEqual([20, 40, 60]);

    // Resume from step 40 through the binary format, as the trainer does after a crash.
    const resume = decodeCheckpoint(encodeCheckpoint(full[1]));
    const resumedLines: MetricLine[] = [];
    const resumed = trainCharLm({ text: TRAIN_TEXT, params, seed: 9, resume, onMetrics: (l) => resumedLines.push(l) });
    expect(Buffer.from(resumed.model.params.buffer).equals(Buffer.from(whole.model.params.buffer))).toBe(true);
    expect(Buffer.from(encodeCheckpoint(resumed.checkpoint)).equals(Buffer.from(encodeCheckpoint(whole.checkpoint)))).toBe(true);
    expect(resumedLines.map((l) => [l.step, l.loss])).toEqual(fullLines.filter((l) => l.step > 40).map((l) => [l.step, l.loss]));
  });

  test('the same seed trains the same model; another seed does not', () => {
    const params = { ...SMALL, steps: 10 };
    const a = trainCharLm({ text: TRAIN_TEXT, params, seed: 4 }).model.params;
    const b = trainCharLm({ text: TRAIN_TEXT, params, seed: 4 }).model.params;
    const c = trainCharLm({ text: TRAIN_TEXT, params, seed: 5 }).model.params;
    expect(Buffer.from(a.buffer).equals(Buffer.from(b.buffer))).toBe(true);
    expect(Buffer.from(a.buffer).equals(Buffer.from(c.buffer))).toBe(false);
  });

  test('zero steps leaves the untrained model as the only checkpoint', () => {
    const seen: CharLmCheckpoint[] = [];
    trainCharLm({ text: TRAIN_TEXT, params: { ...SMALL, steps: 0 }, seed: 2, onCheckpoint: (c) => seen.push(c) });
    expect(seen.map((c) => c.step)).toEqual([0]);
    expect(
      Buffer.from(seen[0].params.buffer).equals(Buffer.from(CharLm.create({ context: 4, embed: 8, hidden: 32 }, 2).params.buffer)),
    ).toBe(true);
  });

  test('the learning rate warms up linearly and decays by cosine to a tenth', () => {
    const p = resolveTrainParams({ lr: 0.01, steps: 100, lrWarmup: 10 });
    expect(learningRate(p, 5)).toBeCloseTo(0.005);
    expect(learningRate(p, 10)).toBeCloseTo(0.01);
    expect(learningRate(p, 100)).toBeCloseTo(0.001);
    expect(learningRate({ ...p, lrSchedule: 'constant' }, 100)).toBe(0.01);
  });
});

describe('checkpoint format', () => {
  const model = CharLm.create({ context: 2, embed: 3, hidden: 4 }, 1);
  const ckpt: CharLmCheckpoint = {
    hyper: model.hyper,
    step: 17,
    params: Float32Array.from(model.params),
    adam: { m: model.zerosLike().fill(0.25), v: model.zerosLike().fill(0.5) },
    rngState: 0xdeadbeef,
    train: { lr: 0.01 },
  };

  test('round-trips every field', () => {
    const back = decodeCheckpoint(encodeCheckpoint(ckpt));
    expect(back.hyper).toEqual(ckpt.hyper);
    expect(back.step).toBe(17);
    expect(back.rngState).toBe(0xdeadbeef);
    expect(back.train).toEqual({ lr: 0.01 });
    expect(Array.from(back.params)).toEqual(Array.from(ckpt.params));
    expect(Array.from(back.adam!.m)).toEqual(Array.from(ckpt.adam!.m));
    expect(Array.from(back.adam!.v)).toEqual(Array.from(ckpt.adam!.v));
    const weightsOnly = decodeCheckpoint(encodeCheckpoint({ ...ckpt, adam: null }));
    expect(weightsOnly.adam).toBeNull();
  });

  test('starts with the format name and refuses damaged bytes', () => {
    const buf = encodeCheckpoint(ckpt);
    expect(buf.subarray(0, 10).toString('ascii')).toBe('charlm-v1\n');
    expect(() => decodeCheckpoint(buf.subarray(0, buf.length - 4))).toThrow(CheckpointFormatError);
    expect(() => decodeCheckpoint(Buffer.from('not a checkpoint at all'))).toThrow(/bad magic/);
    const other = Buffer.from(buf);
    other.write('charlm-v2', 0, 'ascii');
    expect(() => decodeCheckpoint(other)).toThrow(CheckpointFormatError);
  });
});

describe('knob validation', () => {
  test.each([
    [{ lr: -1 }, /^params\.lr must be a positive number \(got -1\)$/],
    [{ lr: 'fast' }, /^params\.lr must be a positive number/],
    [{ hidden: 1.5 }, /^params\.hidden must be an integer from 1 to 4096/],
    [{ context: 0 }, /^params\.context must be an integer from 1 to 64/],
    [{ batchSize: 1e9 }, /^params\.batchSize must be an integer/],
    [{ weightDecay: -0.1 }, /^params\.weightDecay must be a non-negative number/],
    [{ lrSchedule: 'linear' }, /^params\.lrSchedule must be one of "cosine", "constant"/],
    [{ learningRate: 0.1 }, /^params\.learningRate is not a charlm knob/],
  ])('%j is refused with a message naming the knob', (params, message) => {
    expect(() => resolveTrainParams(params)).toThrow(InvalidTrainParamsError);
    expect(() => resolveTrainParams(params)).toThrow(message);
    expect(() => trainCharLm({ text: TRAIN_TEXT, params, seed: 1 })).toThrow(message);
  });

  test('missing knobs take their defaults', () => {
    expect(resolveTrainParams({ lr: 0.02 })).toMatchObject({ lr: 0.02, steps: 1000, batchSize: 64, context: 4, lrSchedule: 'cosine' });
  });
});
