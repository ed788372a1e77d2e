"""Running an engine's command line: find its executable, run it in its own process group, kill the group on
timeout (LibreOffice and Gnumeric both start helpers that would outlive a plain kill)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

from .values import EngineError


def which(env_var: str, *names: str) -> str | None:
    """Path of the executable ``$env_var`` names (when found), else of the first of *names* on PATH, or None."""
    env = os.environ.get(env_var)
    if env:
        found = shutil.which(env)
        if found:
            return found
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


def tail(text: str, n: int = 2000) -> str:
    """The last *n* characters of *text* (stripped), "..." in front when cut."""
    text = text.strip()
    return text if len(text) <= n else "..." + text[-n:]


def run_group(cmd: list[str], timeout: float, what: str, env: dict[str, str],
              cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run *cmd* in its own process group; on timeout kill the whole group and raise EngineError naming *what*
    (the engine), the command and the stderr tail."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
        raise EngineError(f"{what} timed out after {timeout:.0f} s: {' '.join(cmd)}\n"
                          f"stderr: {tail(err or '')}") from None
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)
