"""Helpers for tests that run several processes as a local TF_CONFIG cluster."""

import concurrent.futures
import json
import socket
import subprocess


def free_ports(n):
    """n distinct free TCP ports on 127.0.0.1, found by binding port 0."""
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def worker_configs(n):
    """TF_CONFIG values (JSON strings) for n workers on 127.0.0.1, worker 0 first."""
    cluster = {"worker": [f"127.0.0.1:{port}" for port in free_ports(n)]}
    return [json.dumps({"cluster": cluster, "task": {"type": "worker", "index": i}})
            for i in range(n)]


def run_together(jobs, cwd, timeout=300):
    """Runs processes at the same time and waits for all of them.

    A worker that fails leaves the others waiting for it, so every process
    is stopped at the first failure (or at the timeout).

    Args:
      jobs: A list of (command, env, log_path).
      cwd: The working directory of every process.
      timeout: Seconds to wait in all.

    Returns:
      A list of (returncode, log text), one per job.
    """
    logs = [open(log_path, "w", encoding="utf-8") for _, _, log_path in jobs]
    try:
        processes = [subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                                      stderr=log)
                     for (command, env, _), log in zip(jobs, logs, strict=True)]
        pool = concurrent.futures.ThreadPoolExecutor(len(processes))
        try:
            exits = [pool.submit(process.wait) for process in processes]
            for done in concurrent.futures.as_completed(exits, timeout=timeout):
                if done.result():
                    break
        except concurrent.futures.TimeoutError:
            pass
        finally:
            # Killing the rest also ends the waits the pool still runs.
            for process in processes:
                process.kill()
            pool.shutdown()
    finally:
        for log in logs:
            log.close()
    return [(process.returncode, open(log_path, encoding="utf-8").read())
            for process, (_, _, log_path) in zip(processes, jobs, strict=True)]


def two_workers_and_one_process(job, tmp_path, cwd):
    """Runs a two-worker cluster and a single process side by side; all must succeed.

    Args:
      job: A function (output_dir, name, tf_config or None) -> (command, env,
        log_path). The workers write to tmp_path/"workers", the single process
        to tmp_path/"single".
      tmp_path: The test's temporary folder.
      cwd: The working directory of every process.

    Returns:
      The logs of worker 0, worker 1 and the single process.
    """
    jobs = [job(tmp_path / "workers", f"worker{i}", tf_config)
            for i, tf_config in enumerate(worker_configs(2))]
    jobs.append(job(tmp_path / "single", "single", None))
    finished = run_together(jobs, cwd)
    for returncode, log in finished:
        assert returncode == 0, log[-3000:]
    assert "MultiWorkerMirroredStrategy, because TF_CONFIG lists 2 workers" in finished[0][1]
    return [log for _, log in finished]
