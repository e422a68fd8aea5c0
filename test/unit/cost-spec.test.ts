// The spec's budget block: defaults, the price of the campaign's GPU type, and GPUs per job kept coherent with Slurm.
import { InvalidSpecError, gpuHourPrice, gpusPerJob } from '../../core/spec';
import { parseSpec } from '../../tasks/task-spec';

const base = { name: 'cost', searchSpace: { x: { type: 'float', low: 0, high: 1 } } };

test('defaults: no cap, $2 per GPU-hour, a local job holds no GPU', () => {
  const spec = parseSpec(base);
  expect(spec.budget).toEqual({ gpuHourUsd: { default: 2 }, gpuType: 'default' });
  expect(gpuHourPrice(spec)).toBe(2);
  expect(gpusPerJob(spec)).toBe(0);
});

test('the GPU type picks its price, an unlisted type falls back to default', () => {
  expect(gpuHourPrice(parseSpec({ ...base, budget: { gpuHourUsd: { default: 1.5, h100: 4 }, gpuType: 'h100' } }))).toBe(4);
  expect(gpuHourPrice(parseSpec({ ...base, budget: { gpuHourUsd: { default: 1.5, h100: 4 }, gpuType: 'a10' } }))).toBe(1.5);
});

test('a Slurm job holds nodes × gpusPerNode GPUs; a different gpusPerJob is refused with its path', () => {
  const slurm = { kind: 'slurm', slurm: { nodes: 2, gpusPerNode: 4 } };
  expect(gpusPerJob(parseSpec({ ...base, backend: slurm }))).toBe(8);
  expect(gpusPerJob(parseSpec({ ...base, backend: slurm, budget: { gpusPerJob: 8 } }))).toBe(8);
  expect(() => parseSpec({ ...base, backend: slurm, budget: { gpusPerJob: 1 } })).toThrow(InvalidSpecError);
  expect(() => parseSpec({ ...base, backend: slurm, budget: { gpusPerJob: 1 } })).toThrow(
    /budget\.gpusPerJob: must equal backend\.slurm\.nodes × gpusPerNode \(8\)/,
  );
  expect(gpusPerJob(parseSpec({ ...base, budget: { gpusPerJob: 1 } }))).toBe(1);
});

test('negative prices and caps are refused', () => {
  expect(() => parseSpec({ ...base, budget: { maxCostUsd: -1 } })).toThrow(/budget\.maxCostUsd/);
  expect(() => parseSpec({ ...base, budget: { gpuHourUsd: { h100: -3 } } })).toThrow(/budget\.gpuHourUsd\.h100/);
});
