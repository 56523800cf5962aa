"""(#16) Celery beside Dramatiq over one Redis: the task engine for podarchive's cluster mode.

Everything runs on this machine against a ``redis-server`` the script starts itself (Debian's
``/usr/bin/redis-server``, a free 127.0.0.1 port, a temporary directory, no RDB, no AOF) and
always stops at the end. The engines live in their own virtualenvs, created on first use
under ``--venvs`` (default ``~/.cache/podarchive-bench/engines/<engine>-<version>/``) and
reused while their pins match: ``celery[redis]==5.7.0``, ``dramatiq[redis]==2.2.1``.

The same tiny task on both: record its id in Redis (``SADD done id`` in database 1, and a
duplicate counter when the id was there already), after ``sleep_ms`` of sleep: 0 (a no-op)
or 5 (a stand-in for I/O). Celery runs with ``task_acks_late`` (the message is acked after
the task, as podarchive needs for redelivery), no result backend, and
``--without-mingle --without-gossip --without-heartbeat``; Dramatiq with its default
middleware and ``max_retries=0``. Workers: Dramatiq ``--processes 1 --threads 8``, Celery
``-P threads -c 8`` and, for reference, its default prefork pool ``-P prefork -c 2``.

For each engine and task, in rounds that alternate the order:

* **enqueue**: one producer process (the engine's venv) sends N messages one by one with
  no worker running: messages/s, the producer's CPU per message, redis-server's CPU per
  message;
* **processing**: a worker starts on the backlog of N: start-up (spawn to the first task
  done, as the task itself records it: imports, connecting, consuming), end-to-end (spawn
  to the last task done), and, over the window from the first poll that sees a task done to
  the last, tasks/s, CPU per task of the worker's process tree (``/proc/<pid>/stat``
  ``utime+stime`` of every process descended from the worker, pool children included, and
  the children it reaped) and of redis-server, and the peak of the tree's summed RSS
  (sampled every 50 ms). Every task must be done exactly once: a run that loses tasks
  stops the benchmark (exit 2); duplicates are reported.

Then, with the thread pools:

* **redelivery**: worker A takes a task that sleeps (its first attempt), worker B is up
  and idle, A's whole process tree gets ``kill -9``: seconds until B runs the task, with the
  engine's defaults (Celery: ``visibility_timeout`` 3,600 s; Dramatiq: ``heartbeat_timeout``
  60 s and maintenance on 0.1% of broker commands) and with short settings (Celery:
  ``visibility_timeout`` 10 s, restore sweep every 1 s; Dramatiq: ``heartbeat_timeout``
  10 s, maintenance on every command), each capped at ``--redelivery-cap`` seconds;
* **a live long task** under the short settings: a task of 15 s on a worker that is alive
  (B idle beside it): how many times it runs (a timeout-based redelivery runs it twice);
* **weight**: packages and installed MB of each venv (pip, setuptools excluded) and the
  import time of the app module (``import`` of the engine, its Redis broker and one task;
  median of 5 fresh processes).

``--quick``: 500 tasks, one round, a 20 s redelivery cap; ``--no-redelivery`` leaves the
kill tests out.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

import redis

HERE = Path(__file__).parent
REDIS_SERVER = "/usr/bin/redis-server"
PINS = {
    "celery": ["celery[redis]==5.7.0"],
    "dramatiq": ["dramatiq[redis]==2.2.1"],
}
DEFAULT_VENVS = Path.home() / ".cache" / "podarchive-bench" / "engines"
TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
POLL = 0.05  # seconds between samples of the counters and of /proc
STALL = 60.0  # seconds without progress before a run is declared to have lost tasks
SHORT = {  # the shortest sane redelivery settings (see the module's docstring)
    "BENCH_VISIBILITY_S": "10",
    "BENCH_HEARTBEAT_MS": "10000",
    "BENCH_MAINTENANCE": "1000000",
}
LONG_TASK_S = 15

# ---------------------------------------------------------------- the apps (written to a temp dir)

RECORD_PY = """
import json, os, time
import redis

R = redis.Redis.from_url(os.environ["BENCH_RESULTS"])


def work(i, sleep_ms):
    if sleep_ms:
        time.sleep(sleep_ms / 1000)
    pipe = R.pipeline(transaction=False)
    pipe.sadd("done", i)
    pipe.set("first", repr(time.time()), nx=True)
    if pipe.execute()[0] == 0:
        R.incr("dups")


def hold(tag, seconds):
    attempt = R.incr(f"hold:{tag}:attempts")
    R.rpush(f"hold:{tag}:runs", json.dumps([os.getpid(), time.time(), attempt]))
    if attempt == 1:
        time.sleep(seconds)
    R.rpush(f"hold:{tag}:ends", json.dumps([os.getpid(), time.time(), attempt]))


def ping(token):
    R.hset("ping", token, os.getpid())
"""

DRAMATIQ_APP = """
import os
import dramatiq
from dramatiq.brokers.redis import RedisBroker
import record

options = {}
if os.environ.get("BENCH_SHORT") == "1":
    options = {
        "heartbeat_timeout": int(os.environ["BENCH_HEARTBEAT_MS"]),
        "maintenance_chance": int(os.environ["BENCH_MAINTENANCE"]),
    }
broker = RedisBroker(url=os.environ["BENCH_BROKER"], **options)
dramatiq.set_broker(broker)


@dramatiq.actor(max_retries=0)
def work(i, sleep_ms):
    record.work(i, sleep_ms)


@dramatiq.actor(max_retries=0, time_limit=7_200_000)
def hold(tag, seconds):
    record.hold(tag, seconds)


@dramatiq.actor(max_retries=0)
def ping(token):
    record.ping(token)


def send(name, *args):
    globals()[name].send(*args)


enqueue = work.send
"""

CELERY_APP = """
import os
from celery import Celery
import record

app = Celery("bench", broker=os.environ["BENCH_BROKER"])
app.conf.update(
    task_acks_late=True,
    task_ignore_result=True,
    broker_connection_retry_on_startup=True,
    worker_hijack_root_logger=False,
)
if os.environ.get("BENCH_SHORT") == "1":
    app.conf.broker_transport_options = {
        "visibility_timeout": int(os.environ["BENCH_VISIBILITY_S"]),
        "unacked_restore_interval": 1,
        "unacked_restore_throttle": 1,
    }


@app.task(name="work")
def work(i, sleep_ms):
    record.work(i, sleep_ms)


@app.task(name="hold")
def hold(tag, seconds):
    record.hold(tag, seconds)


@app.task(name="ping")
def ping(token):
    record.ping(token)


def send(name, *args):
    globals()[name].delay(*args)


enqueue = work.delay
"""

# One long-lived producer per engine: JSON commands on stdin, one JSON answer a line.
PRODUCER_PY = """
import json, sys, time
t0 = time.perf_counter()
app = __import__(sys.argv[1])
print(json.dumps({"import_s": time.perf_counter() - t0}), flush=True)
for line in sys.stdin:
    command = json.loads(line)
    if command[0] == "bulk":
        n, sleep_ms = command[1], command[2]
        cpu, wall = time.process_time(), time.perf_counter()
        for i in range(n):
            app.enqueue(i, sleep_ms)
        out = {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}
    elif command[0] == "baseline":
        import record
        cpu, wall = time.process_time(), time.perf_counter()
        for i in range(command[1]):
            record.work(i, 0)
        out = {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}
    else:
        app.send(*command)
        out = {}
    print(json.dumps(out), flush=True)
"""


# ---------------------------------------------------------------- arguments


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20_000, help="tasks per run")
    parser.add_argument("--rounds", type=int, default=1, help="rounds (alternating order)")
    parser.add_argument("--venvs", type=Path, default=DEFAULT_VENVS, help="engines' virtualenvs")
    parser.add_argument(
        "--redelivery-cap", type=float, default=120.0, help="seconds to wait for a redelivery"
    )
    parser.add_argument("--no-redelivery", action="store_true", help="leave the kill tests out")
    parser.add_argument("--quick", action="store_true", help="500 tasks, 1 round, 20 s cap")
    args = parser.parse_args()
    if args.quick:
        args.tasks, args.rounds, args.redelivery_cap = 500, 1, 20.0
    return args


def stop(message: str) -> NoReturn:
    """A run lost tasks or failed: no figure from it; exit 2."""
    print(f"engines: {message}", file=sys.stderr)
    sys.exit(2)


# ---------------------------------------------------------------- virtualenvs


def engine_venv(root: Path, engine: str) -> Path:
    """The engine's virtualenv with its pins, created when missing or stale."""
    version = PINS[engine][0].split("==")[1]
    where = root / f"{engine}-{version}"
    pins = "\n".join(PINS[engine])
    marker = where / "pins.txt"
    if marker.is_file() and marker.read_text() == pins and (where / "bin/python").exists():
        return where
    print(f"{engine}: installing {' '.join(PINS[engine])} into {where} ...", flush=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(where)], check=True)
        subprocess.run(
            [str(where / "bin/python"), "-m", "pip", "install", "-q", *PINS[engine]],
            check=True,
            capture_output=True,
            timeout=900,
        )
    except (subprocess.SubprocessError, OSError) as e:
        stop(f"{engine} could not be installed ({type(e).__name__})")
    marker.write_text(pins)
    return where


def frozen(venv: Path) -> list[str]:
    done = subprocess.run(
        [str(venv / "bin/python"), "-m", "pip", "freeze", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.split()


def installed_mb(venv: Path) -> float:
    """Size of site-packages without pip and setuptools (what the engine pulls in)."""
    (site,) = (venv / "lib").glob("python3*/site-packages")
    skip = ("pip", "setuptools", "_distutils_hack", "pkg_resources", "distutils-precedence")
    total = 0
    for entry in site.iterdir():
        if entry.name.startswith(skip):
            continue
        files = [entry] if entry.is_file() else [p for p in entry.rglob("*") if p.is_file()]
        total += sum(p.stat().st_size for p in files)
    return total / 1e6


# ---------------------------------------------------------------- redis-server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def redis_server(tmp: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """A private redis-server on 127.0.0.1 without persistence; stopped on the way out."""
    port = free_port()
    data = tmp / "redis"
    data.mkdir()
    proc = subprocess.Popen(
        [
            REDIS_SERVER,
            *("--bind", "127.0.0.1", "--port", str(port), "--dir", str(data)),
            *("--save", "", "--appendonly", "no", "--daemonize", "no"),
            *("--protected-mode", "yes", "--loglevel", "warning"),
        ],
        stdout=(tmp / "redis.log").open("wb"),
        stderr=subprocess.STDOUT,
    )
    try:
        client = redis.Redis(host="127.0.0.1", port=port)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    stop(f"redis-server did not start: {(tmp / 'redis.log').read_text()}")
                time.sleep(0.05)
        yield proc, port
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# ---------------------------------------------------------------- /proc


def proc_stat(pid: int) -> tuple[int, float, float] | None:
    """(parent pid, CPU s of the process and its reaped children, RSS MB), None if gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields_ = raw[raw.rindex(")") + 2 :].split()
    ppid = int(fields_[1])
    cpu = sum(int(x) for x in fields_[11:15]) / TICK  # utime stime cutime cstime
    rss = int(fields_[21]) * PAGE / 1e6
    return ppid, cpu, rss


def tree(root: int) -> list[int]:
    """``root`` and every process descended from it."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = proc_stat(int(entry))
            if st is not None:
                children.setdefault(st[0], []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


@dataclass
class TreeSample:
    cpu: float = 0.0
    rss_mb: float = 0.0
    processes: int = 0


def sample(pids: list[int]) -> TreeSample:
    out = TreeSample()
    for pid in pids:
        st = proc_stat(pid)
        if st is not None:
            out.cpu += st[1]
            out.rss_mb += st[2]
            out.processes += 1
    return out


# ---------------------------------------------------------------- engines and workers


@dataclass
class Engine:
    """One way to run a worker: which engine, which venv, which command."""

    label: str
    engine: str
    venv: Path
    argv: list[str]

    def worker_command(self) -> list[str]:
        return [str(self.venv / "bin" / self.argv[0]), *self.argv[1:]]


def engines(venvs: dict[str, Path]) -> list[Engine]:
    quiet = ["--without-mingle", "--without-gossip", "--without-heartbeat", "-l", "WARNING"]
    return [
        Engine(
            "dramatiq (1 process x 8 threads)",
            "dramatiq",
            venvs["dramatiq"],
            ["dramatiq", "dramatiq_app", "--processes", "1", "--threads", "8"],
        ),
        Engine(
            "celery (-P threads -c 8)",
            "celery",
            venvs["celery"],
            ["celery", "-A", "celery_app", "worker", "-P", "threads", "-c", "8", *quiet],
        ),
        Engine(
            "celery (-P prefork -c 2)",
            "celery",
            venvs["celery"],
            ["celery", "-A", "celery_app", "worker", "-P", "prefork", "-c", "2", *quiet],
        ),
    ]


@dataclass
class Bench:
    """The shared state of a run: the temp dir, the server, a results client."""

    work: Path
    port: int
    redis_pid: int
    results: redis.Redis = field(init=False)

    def __post_init__(self) -> None:
        self.results = redis.Redis(host="127.0.0.1", port=self.port, db=1)

    def env(self, short: bool) -> dict[str, str]:
        env = os.environ | {
            "BENCH_BROKER": f"redis://127.0.0.1:{self.port}/0",
            "BENCH_RESULTS": f"redis://127.0.0.1:{self.port}/1",
            "PYTHONPATH": str(self.work),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        env.pop("VIRTUAL_ENV", None)
        if short:
            env |= {"BENCH_SHORT": "1", **SHORT}
        return env

    def flush(self) -> None:
        redis.Redis(host="127.0.0.1", port=self.port).flushall()

    def redis_cpu(self) -> float:
        st = proc_stat(self.redis_pid)
        return st[1] if st else 0.0

    def done(self) -> int:
        return int(self.results.scard("done"))

    def dups(self) -> int:
        return int(self.results.get("dups") or 0)


class Producer:
    """A long-lived producer process of one engine (its venv), driven over stdin."""

    def __init__(self, bench: Bench, engine: Engine, short: bool = False) -> None:
        module = "dramatiq_app" if engine.engine == "dramatiq" else "celery_app"
        self.proc = subprocess.Popen(
            [str(engine.venv / "bin/python"), str(bench.work / "producer.py"), module],
            cwd=bench.work,
            env=bench.env(short),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=(bench.work / f"producer-{engine.engine}.log").open("ab"),
            text=True,
        )
        self.import_s = self.answer()["import_s"]

    def answer(self) -> dict[str, float]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            stop(f"a producer died (see its log in the work dir): exit {self.proc.wait()}")
        out: dict[str, float] = json.loads(line)
        return out

    def ask(self, *command: object) -> dict[str, float]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()
        return self.answer()

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Worker:
    """A worker process (tree) of one engine; stopped gracefully, then killed."""

    def __init__(self, bench: Bench, engine: Engine, name: str, short: bool = False) -> None:
        self.log = bench.work / f"worker-{name}.log"
        self.started = time.time()
        self.proc = subprocess.Popen(
            engine.worker_command(),
            cwd=bench.work,
            env=bench.env(short),
            stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.pids = [self.proc.pid]

    def refresh(self) -> list[int]:
        """The tree as it is now (new pool children are picked up)."""
        self.pids = tree(self.proc.pid) if self.proc.poll() is None else self.pids
        return self.pids

    def kill9(self) -> None:
        for pid in self.refresh():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        pids = self.refresh()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(20)
        for pid in pids:  # only the processes of this tree, by id
            with contextlib.suppress(ProcessLookupError):
                if proc_stat(pid) is not None:
                    os.kill(pid, signal.SIGKILL)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@contextlib.contextmanager
def running(worker: Worker) -> Iterator[Worker]:
    try:
        yield worker
    finally:
        worker.stop()


# ---------------------------------------------------------------- throughput runs


@dataclass
class Run:
    engine: str
    sleep_ms: int
    round: int
    enqueue_rate: float
    producer_us: float
    redis_enqueue_us: float
    startup_s: float
    e2e_s: float
    rate: float
    worker_us: float
    redis_us: float
    peak_mb: float
    processes: int
    dups: int


def throughput(bench: Bench, engine: Engine, n: int, sleep_ms: int, rnd: int) -> Run:
    """Enqueue ``n`` tasks with no worker, then one worker drains them: measured, verified."""
    bench.flush()
    producer = Producer(bench, engine)
    try:
        redis0 = bench.redis_cpu()
        sent = producer.ask("bulk", n, sleep_ms)
        redis_enqueue = bench.redis_cpu() - redis0
    finally:
        producer.close()
    worker = Worker(bench, engine, f"{engine.engine}-{sleep_ms}ms-r{rnd}")
    with running(worker):
        first: tuple[float, int, float, float] | None = None  # time, count, worker CPU, redis
        peak, processes, last_count, last_progress = 0.0, 0, 0, time.monotonic()
        refreshed = 0.0
        while True:
            now = time.monotonic()
            if now - refreshed > 0.5:
                worker.refresh()
                refreshed = now
            count = bench.done()
            tree_now = sample(worker.pids)
            wall = time.time()
            peak, processes = max(peak, tree_now.rss_mb), max(processes, tree_now.processes)
            if count and first is None:
                first = (wall, count, tree_now.cpu, bench.redis_cpu())
            if count != last_count:
                last_count, last_progress = count, now
            if count >= n:
                break
            if worker.proc.poll() is not None:
                code = worker.proc.returncode
                stop(f"{engine.label}: the worker exited ({code}), see {worker.log}")
            if now - last_progress > STALL:
                stop(f"{engine.label}: LOST tasks: {count} of {n} done, no progress for {STALL} s")
            time.sleep(POLL)
        end_cpu, end_redis = sample(worker.pids).cpu, bench.redis_cpu()
        assert first is not None
        first_done = float(bench.results.get("first") or first[0])
        time.sleep(0.5)  # a late duplicate would show here
        dups = bench.dups()
    if bench.done() != n:
        stop(f"{engine.label}: {bench.done()} distinct tasks done, {n} sent")
    window, tasks = wall - first[0], n - first[1]
    return Run(
        engine=engine.label,
        sleep_ms=sleep_ms,
        round=rnd,
        enqueue_rate=n / sent["wall"],
        producer_us=sent["cpu"] / n * 1e6,
        redis_enqueue_us=redis_enqueue / n * 1e6,
        startup_s=first_done - worker.started,
        e2e_s=wall - worker.started,
        rate=tasks / window if window > 0 else float("nan"),
        worker_us=(end_cpu - first[2]) / tasks * 1e6 if tasks else float("nan"),
        redis_us=(end_redis - first[3]) / tasks * 1e6 if tasks else float("nan"),
        peak_mb=peak,
        processes=processes,
        dups=dups,
    )


def baseline(bench: Bench, engine: Engine, n: int) -> tuple[float, float]:
    """The task body alone (``record.work`` called in a loop, one thread, no engine): CPU
    µs per call of the caller and of redis-server."""
    bench.flush()
    producer = Producer(bench, engine)
    try:
        redis0 = bench.redis_cpu()
        out = producer.ask("baseline", n)
        redis_cpu = bench.redis_cpu() - redis0
    finally:
        producer.close()
    if bench.done() != n:
        stop(f"baseline: {bench.done()} of {n} recorded")
    return out["cpu"] / n * 1e6, redis_cpu / n * 1e6


# ---------------------------------------------------------------- redelivery


@dataclass
class Redelivery:
    engine: str
    settings: str
    seconds: float | None  # None: not within the cap
    runs: int
    note: str = ""


def wait_for(check: Callable[[], bool], timeout: float, every: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(every)
    return check()


def runs_of(bench: Bench, tag: str) -> list[list[float]]:
    return [json.loads(r) for r in bench.results.lrange(f"hold:{tag}:runs", 0, -1)]


def ready(bench: Bench, producer: Producer, worker: Worker, timeout: float = 60) -> None:
    """Until a ping is run by a process of ``worker``'s tree (others may take some)."""
    deadline = time.monotonic() + timeout
    k = 0
    while time.monotonic() < deadline:
        token = f"{worker.proc.pid}-{k}"
        producer.ask("ping", token)
        got = wait_for(lambda t=token: bench.results.hexists("ping", t), 1.0)
        if got:
            pid = int(bench.results.hget("ping", token) or 0)
            if pid in worker.refresh():
                return
        k += 1
    stop(f"worker {worker.proc.pid} never became ready, see {worker.log}")


def redelivery(bench: Bench, engine: Engine, short: bool, cap: float) -> Redelivery:
    """A takes the task and is killed -9 with its whole tree; B, idle, must run it."""
    bench.flush()
    tag = f"{engine.engine}-{'short' if short else 'default'}"
    producer = Producer(bench, engine, short)
    a = Worker(bench, engine, f"{tag}-A", short)
    b: Worker | None = None
    try:
        ready(bench, producer, a)
        producer.ask("hold", tag, 3600)
        if not wait_for(lambda: len(runs_of(bench, tag)) >= 1, 30):
            stop(f"{engine.label}: the held task never started")
        b = Worker(bench, engine, f"{tag}-B", short)
        ready(bench, producer, b)
        holder = int(runs_of(bench, tag)[0][0])
        if holder not in a.refresh():
            stop(f"{engine.label}: the held task ran outside worker A")
        a.kill9()
        killed = time.time()
        got = wait_for(lambda: len(runs_of(bench, tag)) >= 2, cap, every=0.1)
        runs = runs_of(bench, tag)
        seconds = runs[1][1] - killed if got else None
        if got and int(runs[1][0]) not in b.refresh():
            stop(f"{engine.label}: the redelivered task ran outside worker B")
        if got:
            time.sleep(2)  # a second redelivery would show here
        return Redelivery(
            engine.engine, "short" if short else "defaults", seconds, len(runs_of(bench, tag))
        )
    finally:
        producer.close()
        a.stop()
        if b is not None:
            b.stop()


def long_live_task(bench: Bench, engine: Engine) -> Redelivery:
    """Short settings, nobody killed: a task of LONG_TASK_S on a live worker A, B idle."""
    bench.flush()
    tag = f"{engine.engine}-long"
    producer = Producer(bench, engine, short=True)
    a = Worker(bench, engine, f"{tag}-A", short=True)
    b: Worker | None = None
    try:
        ready(bench, producer, a)
        producer.ask("hold", tag, LONG_TASK_S)
        if not wait_for(lambda: len(runs_of(bench, tag)) >= 1, 30):
            stop(f"{engine.label}: the long task never started")
        b = Worker(bench, engine, f"{tag}-B", short=True)
        ready(bench, producer, b)
        wait_for(lambda: bench.results.llen(f"hold:{tag}:ends") >= 1, LONG_TASK_S + 30)
        time.sleep(5)
        runs = runs_of(bench, tag)
        first = runs[0][1]
        note = ", ".join(f"run {int(r[2])} at +{r[1] - first:.1f} s" for r in runs[1:])
        return Redelivery(engine.engine, "short, live", None, len(runs), note)
    finally:
        producer.close()
        a.stop()
        if b is not None:
            b.stop()


# ---------------------------------------------------------------- weight


def import_time(bench: Bench, engine: str, venv: Path, repeats: int = 5) -> float:
    module = "dramatiq_app" if engine == "dramatiq" else "celery_app"
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    times = []
    for _ in range(repeats):
        done = subprocess.run(
            [str(venv / "bin/python"), "-c", code],
            cwd=bench.work,
            env=bench.env(False),
            capture_output=True,
            text=True,
            check=True,
        )
        times.append(float(done.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


# ---------------------------------------------------------------- report


def show(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
    sys.stdout.flush()


def span(values: list[float], fmt: str) -> str:
    low, high = fmt.format(min(values)), fmt.format(max(values))
    return low if low == high else f"{low}–{high}"


METRICS: list[tuple[str, Callable[[Run], float], str]] = [
    ("enqueue, messages/s (1 producer)", lambda r: r.enqueue_rate, "{:,.0f}"),
    ("enqueue, producer CPU µs/message", lambda r: r.producer_us, "{:.0f}"),
    ("enqueue, redis-server CPU µs/message", lambda r: r.redis_enqueue_us, "{:.0f}"),
    ("worker start-up to first task done, s", lambda r: r.startup_s, "{:.2f}"),
    ("end to end (spawn to last task), s", lambda r: r.e2e_s, "{:.1f}"),
    ("processing, tasks/s", lambda r: r.rate, "{:,.0f}"),
    ("worker tree CPU µs/task", lambda r: r.worker_us, "{:.0f}"),
    ("redis-server CPU µs/task", lambda r: r.redis_us, "{:.0f}"),
    ("peak RSS of the worker tree, MB", lambda r: r.peak_mb, "{:.0f}"),
    ("processes in the worker tree", lambda r: float(r.processes), "{:.0f}"),
    ("duplicates", lambda r: float(r.dups), "{:.0f}"),
]


def throughput_table(runs: list[Run], labels: list[str], sleep_ms: int, n: int) -> None:
    what = "no-op task" if sleep_ms == 0 else f"task sleeping {sleep_ms} ms"
    rounds = len({r.round for r in runs})
    print(f"\n{what}, {n:,} tasks; min–max over {rounds} round(s); ratio of medians")
    short_labels = [label.split(" (")[0] + " (" + label.split(" (")[1] for label in labels]
    rows = [("", *short_labels, "celery threads / dramatiq")]
    for name, get, fmt in METRICS:
        cells, medians = [], []
        for label in labels:
            values = [get(r) for r in runs if r.engine == label and r.sleep_ms == sleep_ms]
            cells.append(span(values, fmt) if values else "–")
            medians.append(statistics.median(values) if values else None)
        d, c = medians[0], medians[1]
        ratio = f"{c / d:.2f}x" if d and c is not None else "–"
        rows.append((name, *cells, ratio))
    show(rows)


def redelivery_table(results: list[Redelivery], cap: float) -> None:
    print(f"\nredelivery after kill -9 of the worker holding the message (cap {cap:.0f} s)")
    rows = [("engine", "settings", "kill to rerun on the other worker, s", "runs", "note")]
    for r in results:
        if r.settings == "short, live":
            secs = "– (nobody killed)"
        else:
            secs = f"{r.seconds:.1f}" if r.seconds is not None else f"> {cap:.0f} (not within cap)"
        rows.append((r.engine, r.settings, secs, str(r.runs), r.note))
    show(rows)


def machine(redis_version: str) -> str:
    model = "?"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    return (
        f"{os.cpu_count()} CPUs ({model}); Python {platform.python_version()}; "
        f"redis-server {redis_version}; load {Path('/proc/loadavg').read_text().split()[0]}"
    )


# ---------------------------------------------------------------- main


def write_apps(work: Path) -> None:
    for name, text in (
        ("record.py", RECORD_PY),
        ("dramatiq_app.py", DRAMATIQ_APP),
        ("celery_app.py", CELERY_APP),
        ("producer.py", PRODUCER_PY),
    ):
        (work / name).write_text(text.lstrip())


def main() -> None:
    args = arguments()
    if args.venvs.resolve().is_relative_to(HERE.parent.resolve()):
        sys.exit("--venvs must be outside the repository")
    if not Path(REDIS_SERVER).exists():
        sys.exit(f"{REDIS_SERVER} is missing (apt-get install redis-server)")
    venvs = {e: engine_venv(args.venvs, e) for e in PINS}
    version = subprocess.run([REDIS_SERVER, "--version"], capture_output=True, text=True).stdout
    print(f"engines: {args.tasks:,} tasks a run, {args.rounds} round(s)")
    print(machine(version.split()[2].removeprefix("v=")))
    for e, venv in venvs.items():
        print(f"{e}: {venv} ({', '.join(frozen(venv))})")
    all_engines = engines(venvs)
    labels = [e.label for e in all_engines]
    keep = os.environ.get("BENCH_KEEP")  # a directory to keep the logs in, for debugging
    with contextlib.ExitStack() as stack:
        tmp = Path(keep) if keep else Path(stack.enter_context(tempfile.TemporaryDirectory()))
        tmp.mkdir(parents=True, exist_ok=True)
        work = tmp / "work"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        write_apps(work)
        server, port = stack.enter_context(redis_server(tmp))
        bench = Bench(work=work, port=port, redis_pid=server.pid)
        print(f"redis-server pid {server.pid} on 127.0.0.1:{port}, no persistence, in {tmp}")

        runs: list[Run] = []
        for rnd in range(args.rounds):
            order = all_engines if rnd % 2 == 0 else all_engines[::-1]
            for sleep_ms in (0, 5):
                for engine in order:
                    run = throughput(bench, engine, args.tasks, sleep_ms, rnd)
                    runs.append(run)
                    print(
                        f"  round {rnd + 1}, {sleep_ms} ms, {engine.label}: enqueue "
                        f"{run.enqueue_rate:,.0f}/s, start-up {run.startup_s:.2f} s, "
                        f"{run.rate:,.0f} tasks/s, worker {run.worker_us:.0f} µs/task, "
                        f"redis {run.redis_us:.0f} µs/task, peak {run.peak_mb:.0f} MB, "
                        f"{run.dups} duplicates; load {Path('/proc/loadavg').read_text()[:4]}",
                        flush=True,
                    )
        base = baseline(bench, all_engines[0], args.tasks)
        for sleep_ms in (0, 5):
            throughput_table(runs, labels, sleep_ms, args.tasks)
        print(
            f"\nthe task body alone ({args.tasks:,} direct calls of record.work, one thread, "
            f"no engine): {base[0]:.0f} µs CPU a call, redis-server {base[1]:.0f} µs a call; "
            "it is inside every figure per task above"
        )

        print("\nweight")
        rows = [("engine", "packages (pip freeze)", "installed MB", "import of app module, s")]
        for e, venv in venvs.items():
            rows.append(
                (
                    e,
                    str(len(frozen(venv))),
                    f"{installed_mb(venv):.1f}",
                    f"{import_time(bench, e, venv):.3f}",
                )
            )
        show(rows)

        if not args.no_redelivery:
            results: list[Redelivery] = []
            threads = {e.engine: e for e in all_engines if "threads" in e.label}
            for short in (True, False):
                for name in ("dramatiq", "celery"):
                    r = redelivery(bench, threads[name], short, args.redelivery_cap)
                    results.append(r)
                    print(f"  redelivery {name} {r.settings}: {r.seconds} s, {r.runs} runs")
            for name in ("dramatiq", "celery"):
                results.append(long_live_task(bench, threads[name]))
            redelivery_table(results, args.redelivery_cap)


if __name__ == "__main__":
    main()
