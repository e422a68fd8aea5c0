// Finds a program on a PATH the way a shell would: the first executable regular file of that name.
import fs from 'node:fs';
import path from 'node:path';

/** The first executable `name` on `pathVar` (default this process's PATH), or undefined. */
export function findOnPath(name: string, pathVar = process.env.PATH ?? ''): string | undefined {
  for (const dir of pathVar.split(path.delimiter).filter(Boolean)) {
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      /* not here */
    }
  }
  return undefined;
}
