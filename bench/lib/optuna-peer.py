# The durable-throughput bench's peer: Optuna trials on a PostgreSQL storage (RDBStorage), N_JOBS at a time, each a
# no-op objective; with a Node binary given, each trial also starts that Node process once (`node -e 0`), as each
# Flywheel experiment starts its trainer. Prints one JSON line: trials and seconds.
# Run: python optuna-peer.py STORAGE_URL STUDY TRIALS N_JOBS [NODE]
import json
import subprocess
import sys
import time

import optuna


def main() -> None:
    url, study_name, trials, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    node = sys.argv[5] if len(sys.argv) > 5 else None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(storage=url, study_name=study_name)

    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0.0, 1.0)
        if node:
            subprocess.run([node, "-e", "0"], check=True)
        return x

    start = time.perf_counter()
    study.optimize(objective, n_trials=trials, n_jobs=jobs)
    seconds = time.perf_counter() - start
    done = len([t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE])
    print(json.dumps({"trials": done, "seconds": seconds}))


if __name__ == "__main__":
    main()
