# Flywheel's Ray job launcher, the same for every job: the entrypoint is
# `python3 <launch dir>/ray-launcher.py <run dir> <launch dir>`, and the trainer's argv and env come from
# <launch dir>/ray-argv.json, so no argument is ever part of a shell string. It records its start, end, the trainer's
# exit code and the trainer's stdout and stderr in the launch dir (as the Slurm batch script does), never in the run
# dir the trainer writes, passes SIGTERM/SIGINT (a Ray job stop) on to the trainer, and ties the trainer to its own
# life: a launcher (the job's driver) that dies takes the trainer with it, so a resumed job never trains beside an orphan.
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import time

PR_SET_PDEATHSIG = 1

# The launch directory's records: the names core/contract-files.ts gives them (this file is copied alone into the
# launch directory and run on a Ray node, so it cannot import them; test/unit/contract-files.test.ts compares).
LAUNCH_DIR_SUFFIX = ".launch"
LAUNCHES_LOG = "launches.log"
STARTED_AT_FILE = "started_at"
ENDED_AT_FILE = "ended_at"
EXIT_CODE_FILE = "exit_code"
STDOUT_LOG = "stdout.log"
STDERR_LOG = "stderr.log"


def write(path, text):
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def submission_id():
    try:
        meta = json.loads(os.environ.get("RAY_JOB_CONFIG_JSON_ENV_VAR", "{}")).get("metadata", {})
        return meta.get("job_submission_id") or meta.get("job_name") or "?"
    except ValueError:
        return "?"


def die_with_launcher():
    # In the child, between fork and exec: SIGKILL when the launcher dies, even by SIGKILL.
    launcher = os.getppid()
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != launcher:
        os._exit(137)


def main():
    run_dir = sys.argv[1]
    d = sys.argv[2] if len(sys.argv) > 2 else run_dir.rstrip("/") + LAUNCH_DIR_SUFFIX
    job = json.load(open(os.path.join(d, "ray-argv.json")))
    for name in (EXIT_CODE_FILE, ENDED_AT_FILE):
        try:
            os.remove(os.path.join(d, name))
        except FileNotFoundError:
            pass
    with open(os.path.join(d, LAUNCHES_LOG), "a") as f:
        f.write("%s %s %d\n" % (submission_id(), socket.gethostname(), os.getpid()))
    write(os.path.join(d, "ray-launcher.pid"), "%d\n" % os.getpid())
    write(os.path.join(d, STARTED_AT_FILE), "%.6f\n" % time.time())
    # The trainer's environment is the allow-list the worker built (no Flywheel or agent secret), plus what Ray
    # itself sets for this job: the runtime_env's variables and the GPU runtime's (CUDA_VISIBLE_DEVICES).
    keep = set(job.get("keep") or [])
    env = {k: v for k, v in os.environ.items() if k in keep or k.startswith(("CUDA_", "NCCL_", "NVIDIA_"))}
    env.update(job.get("env") or {})
    with open(os.path.join(d, STDOUT_LOG), "ab") as out, open(os.path.join(d, STDERR_LOG), "ab") as err:
        try:
            child = subprocess.Popen(job["argv"], cwd=run_dir, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err, preexec_fn=die_with_launcher)
        except OSError as e:
            # The trainer could not start (no such program): the trainer's failure, recorded as the shell would.
            err.write(("ray-launcher: cannot start %s: %s\n" % (job["argv"][0], e)).encode())
            err.flush()
            write(os.path.join(d, ENDED_AT_FILE), "%.6f\n" % time.time())
            write(os.path.join(d, EXIT_CODE_FILE), "127\n")
            sys.exit(127)

    def forward(sig, _frame):
        try:
            child.send_signal(sig)
        except ProcessLookupError:
            pass

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    code = child.wait()
    if code < 0:
        code = 128 - code  # killed by a signal: the shell's convention
    write(os.path.join(d, ENDED_AT_FILE), "%.6f\n" % time.time())
    write(os.path.join(d, EXIT_CODE_FILE), "%d\n" % code)
    sys.exit(code)


main()
