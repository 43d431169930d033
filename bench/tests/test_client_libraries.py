"""The client libraries' probes (bench/client-libraries): each builds without a warning against
the installed headers (skipped, naming the package, where the headers are missing), and the
measuring script's readers parse what the kernel writes."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import benchpath

PROBES = os.path.join(benchpath.BENCH, "client-libraries")
sys.path.insert(0, os.path.join(benchpath.ROOT, "scripts"))


def load_measure():
    """bench/client-libraries/measure as a module (it has no .py suffix)."""
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("measure", os.path.join(PROBES, "measure"))
    spec = importlib.util.spec_from_loader("measure", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


class ClientLibraryProbeTests(unittest.TestCase):
    def test_the_probes_build_without_warnings(self):
        compiler = shutil.which("cc") or shutil.which("clang")
        if compiler is None:
            self.skipTest("no C compiler")
        for name, package, debian in (("baseline", None, None), ("pulse-probe", "libpulse", "libpulse-dev"),
                                      ("pipewire-probe", "libpipewire-0.3", "libpipewire-0.3-dev")):
            with self.subTest(name):
                flags = []
                if package:
                    found = subprocess.run(["pkg-config", "--cflags", "--libs", package], capture_output=True, text=True)
                    if found.returncode != 0:
                        self.skipTest("%s not installed (scripts/bootstrap)" % debian)
                    flags = found.stdout.split()
                with tempfile.TemporaryDirectory() as work:
                    result = subprocess.run([compiler, "-Wall", "-Wextra", "-Werror", "-O2", os.path.join(PROBES, name + ".c"), "-o",
                                             os.path.join(work, name)] + flags, capture_output=True, text=True)
                    self.assertEqual(result.returncode, 0, result.stderr)

    def test_the_wake_ups_are_summed_over_every_thread(self):
        measure = load_measure()
        pid = os.getpid()
        tasks = os.listdir("/proc/%d/task" % pid)
        total = 0
        for task in tasks:
            with open("/proc/%d/task/%s/status" % (pid, task)) as f:
                total += sum(int(line.split()[1]) for line in f if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")))
        self.assertGreaterEqual(measure.switches(pid), total)
        self.assertGreater(measure.status_kib(pid, "VmRSS"), 0)
        files = dict(measure.rss_by_file(pid))
        self.assertTrue(any(name.startswith("libc") for name in files), files)


if __name__ == "__main__":
    unittest.main()
