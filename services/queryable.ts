// What a service function runs its statements on: the pool's `Db`, or a transaction a caller opened around several
// services (a transaction has the same query-builder methods), so one unit of work can span aggregates. `$with` and
// `with` make a statement of several writes (a data-modifying WITH): one round trip where a transaction took several.
import type { Db } from '../db/client';

export type Queryable = Pick<Db, 'select' | 'insert' | 'update' | 'delete' | 'execute' | '$with' | 'with'>;
