"""``python -m bench.startup``: how long the ``relay`` command takes before it does anything.

Claude Code and Codex run ``relay hook …`` on every tool call, edit, prompt and stop, so its
start is paid on each. This starts Relay on a scratch SQLite store with a policy that approves
Bash prompts, then times, as a user's shell would run them, each a number of times:

- the interpreter starting and importing what the hook needs (``python -c "import …"``);
- ``relay hook`` answering each event it handles, from the hosts' recorded inputs
  (tests/e2e/hooks/): a ``PermissionRequest`` the policy decides at once, an edit checked
  against the reservations of a scratch git repository (a Claude Code ``Edit``, a Codex
  ``apply_patch``), and ``Stop``, ``SessionStart`` and ``UserPromptSubmit`` with nothing new
  waiting (the common case);
- ``relay --version``, ``relay whoami`` and ``relay tasks list`` against the server.

It prints the median and the slowest wall time of each, and its CPU time (user + system), with
the targets of "The first week, round three" beside them.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from bench.__main__ import free_port

ROOT = Path(__file__).parents[1]
HOOKS = ROOT / "tests" / "e2e" / "hooks"
RELAY = str(Path(sys.executable).with_name("relay"))
RECORDED_REPOSITORY = "/home/dev/shop"  # where the recorded inputs ran; a scratch one here
# Each hook event timed: its row, the host, and its recorded input under HOOKS.
HOOK_EVENTS = {
    "hook: PermissionRequest, a policy decides": ("claude-code", "claude-code/bash.json"),
    "hook: PreToolUse, an Edit checked": ("claude-code", "claude-code/pre-tool-use-edit.json"),
    "hook: PreToolUse, Codex's apply_patch checked": (
        "codex",
        "codex/pre-tool-use-apply-patch-tool.json",
    ),
    "hook: Stop": ("claude-code", "claude-code/stop.json"),
    "hook: SessionStart": ("claude-code", "claude-code/session-start.json"),
    "hook: UserPromptSubmit": ("claude-code", "claude-code/user-prompt-submit.json"),
}
# (what is timed, its target in seconds of wall time)
TARGETS = {
    "imports of the hook": 0.150,
    **dict.fromkeys(HOOK_EVENTS, 0.100),
    "relay --version": 0.300,
    "relay whoami": 0.300,
    "relay tasks list": 0.300,
}


def timed(command: Sequence[str], env: dict[str, str], stdin: bytes = b"") -> tuple[float, float]:
    """One run's wall time and CPU time (user + system of the child), in seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, input=stdin, env=env, capture_output=True, timeout=60)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # A hook that failed says why on stderr and exits 0: it would be timing its fallback.
    if done.returncode != 0 or b"relay hook:" in done.stderr:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.decode()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


@contextmanager
def serving(home: Path) -> Iterator[tuple[str, str]]:
    """Relay on a scratch store while the block runs (stopped however it ends): its URL, and
    the token of agent ``coder`` whose Bash prompts a policy approves."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
    env |= {"HOME": str(home), "RELAY_DATA_DIR": str(home / "data")}  # the shipped defaults
    server = subprocess.Popen(
        [RELAY, "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                if httpx.get(f"{url}/health").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        secret = (home / "data" / "operator_token").read_text().strip()
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {secret}"}) as op:
            token = op.post("/v1/agents/register", json={"agent_id": "coder"}).json()["token"]
            policy = {
                "name": "Bash is fine here",
                "decision": "approve",
                "match": {"payload": {"/tool_name": {"eq": "Bash"}}},
            }
            op.post("/v1/policies", json=policy).raise_for_status()
        yield url, token
    finally:
        server.terminate()
        server.wait()


def repository(root: Path) -> Path:
    """A scratch git repository with a workspace of its own, whose files nobody reserved."""
    root.mkdir()
    for args in (["init", "-q"], ["config", "relay.workspace", "bench/shop"]):
        subprocess.run(["git", *args], cwd=root, check=True)
    return root


def hook_commands(repo: Path) -> dict[str, tuple[list[str], bytes]]:
    """Each hook event's command and input, the recorded repository made ``repo``."""
    return {
        name: (
            [RELAY, "hook", host],
            (HOOKS / recorded).read_text().replace(RECORDED_REPOSITORY, str(repo)).encode(),
        )
        for name, (host, recorded) in HOOK_EVENTS.items()
    }


def measure(runs: int) -> dict[str, tuple[list[float], list[float]]]:
    with (
        tempfile.TemporaryDirectory(prefix="relay-bench-startup-") as scratch,
        serving(Path(scratch)) as (url, token),
    ):
        # As an installed Relay starts: its bytecode written (pip writes it on install; a
        # PYTHONDONTWRITEBYTECODE left in the environment would compile every module each time).
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("RELAY_") and k != "PYTHONDONTWRITEBYTECODE"
        }
        # The agent named, as the hooks relay connect writes name it (--agent): none asks whose
        # token it is.
        env |= {"HOME": scratch, "RELAY_URL": url, "RELAY_TOKEN": token, "RELAY_AGENT_ID": "coder"}
        commands: dict[str, tuple[list[str], bytes]] = {
            "imports of the hook": (
                [
                    sys.executable,
                    "-c",
                    "import relay_cli.entry, relay_cli.hook_answers, relay_cli.handover",
                ],
                b"",
            ),
            **hook_commands(repository(Path(scratch) / "shop")),
            "relay --version": ([RELAY, "--version"], b""),
            "relay whoami": ([RELAY, "whoami"], b""),
            "relay tasks list": ([RELAY, "tasks", "list"], b""),
        }
        for command, stdin in commands.values():
            timed(command, env, stdin)  # once untimed: the bytecode written, the files cached
        found: dict[str, tuple[list[float], list[float]]] = {}
        for _ in range(runs):  # interleaved, so that each sees the same machine
            for name, (command, stdin) in commands.items():
                wall, cpu = timed(command, env, stdin)
                walls, cpus = found.setdefault(name, ([], []))
                walls.append(wall)
                cpus.append(cpu)
        return found


def summary(found: dict[str, tuple[list[float], list[float]]]) -> dict[str, dict[str, Any]]:
    """Each command's median and slowest wall time and median CPU, in ms, against its target."""
    return {
        name: {
            "median_ms": round(statistics.median(walls) * 1000, 1),
            "slowest_ms": round(max(walls) * 1000, 1),
            "cpu_ms": round(statistics.median(cpus) * 1000, 1),
            "target_ms": TARGETS[name] * 1000,
            "met": statistics.median(walls) <= TARGETS[name],
        }
        for name, (walls, cpus) in found.items()
    }


def print_table(summed: dict[str, dict[str, Any]]) -> None:
    print(f"\n{'the relay command starting':44} {'median':>8} {'slowest':>8} {'CPU':>8}   target")
    for name, row in summed.items():
        print(
            f"{name:44} {row['median_ms']:6.0f} ms {row['slowest_ms']:6.0f} ms "
            f"{row['cpu_ms']:6.0f} ms   {row['target_ms']:.0f} ms "
            + ("met" if row["met"] else "missed")
        )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.startup", description=__doc__)
    parser.add_argument("--runs", type=int, default=15, help="times each command is run")
    args = parser.parse_args(argv)
    print_table(summary(measure(args.runs)))


if __name__ == "__main__":
    main()
