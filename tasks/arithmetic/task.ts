// The arithmetic task as a Task (core/task.ts): two-digit sums, a task that takes the user's path (its files are
// registered with `flywheel dataset add` and `flywheel suite add`, then run as a custom task), with simulated users
// and a teacher of its own (spec `outerLoop.teacher.task: arithmetic`).
import path from 'node:path';
import type { Task } from '../../core/task';
import { customTask } from '../custom/task';
import { writeArithmeticFiles } from './generate';
import { arithmeticUsers } from './simulated-users';
import { arithmeticTeacher } from './teacher';

export const arithmeticTask: Task = {
  ...customTask,
  name: 'arithmetic',
  // Each problem is drawn on its own; every item names the one generator as its source. A campaign of its registered
  // files runs as a custom task, whose `auto` pairs these items one by one too.
  itemClusters: 'item',
  users: ({ seed }) => arithmeticUsers(seed),
  usersAsk: 'sums outside its suite (the suite of the files --seed generated)',
  teacher: arithmeticTeacher,
  example: { spec: path.join(__dirname, 'arithmetic.yaml'), writeFiles: (dir, seed) => writeArithmeticFiles(dir, seed) },
};
