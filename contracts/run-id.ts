/** A training run's id: one per (experiment, workflow attempt), the key of its row, its slot and its ledger entry. */
export const runIdOf = (experimentId: string, attempt: number) => `${experimentId}/r${attempt}`;
