// Byte counts as people read them, in the one-line errors and limit reasons that name a size.

/** `12 B`, `3.0 KiB`, `4.0 MiB`, `1.0 GiB`. */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) [v, i] = [v / 1024, i + 1];
  return i === 0 ? `${n} B` : `${v.toFixed(1)} ${units[i]}`;
}
