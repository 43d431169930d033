"""What every part of the bench shares: its failure, a phase's frame, a command run with a timeout, a median."""
import subprocess, time


class Failure(Exception):
    pass


def phase(name, seconds):
    """Prints a phase's start and, after it, its wall time."""
    class Phase:
        def __enter__(self):
            self.start = time.monotonic()
            print(f"==> {name} (timeout {seconds} s)", flush=True)
            return self

        def __exit__(self, kind, value, tb):
            state = "ok" if kind is None else "FAILED"
            print(f"==> {name}: {state}, {time.monotonic() - self.start:.1f} s", flush=True)
            return False
    return Phase()


def run(argv, seconds, what):
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=seconds)
    except subprocess.TimeoutExpired:
        raise Failure(f"{what}: no answer within {seconds} s ({' '.join(argv)})")
    if result.returncode != 0:
        raise Failure(f"{what}: {' '.join(argv)} exited {result.returncode}: {result.stderr.strip()[-400:]}")
    return result.stdout


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
