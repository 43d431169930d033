"""The guest's parts as the files they are: its C programs build with the host's cc without a
warning, its init's shell fragments parse in the guest's shell (busybox sh)."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from benchpath import GUEST
from realkernel import harness
from realkernel.bluetooth import image

# What each program links, as the benches build it.
LIBRARIES = {"agent.c": ["-lsystemd"], "jack.c": ["-lasound"], "controls.c": ["-lasound"]}


class GuestSources(unittest.TestCase):
    def test_the_c_programs_build_without_warnings(self):
        compiler = shutil.which("cc")
        self.assertIsNotNone(compiler, "no cc on the host")
        sources = sorted(name for name in os.listdir(GUEST) if name.endswith(".c"))
        self.assertEqual(sources, ["agent.c", "clock.c", "controls.c", "ear.c", "jack.c", "stamp.c"])
        with tempfile.TemporaryDirectory() as work:
            for name in sources:
                with self.subTest(name):
                    result = subprocess.run([compiler, "-Wall", "-Wextra", "-Werror", "-O2", "-o", os.path.join(work, name[:-2]),
                                             os.path.join(GUEST, name), *LIBRARIES.get(name, [])], capture_output=True, text=True)
                    self.assertEqual(result.returncode, 0, f"cc -Wall -Wextra {name}: {result.stderr}")

    def test_the_shell_fragments_parse(self):
        self.assertTrue(os.path.exists("/bin/busybox"), "no /bin/busybox (busybox-static) on the host")
        fragments = sorted(name for name in os.listdir(GUEST) if name.endswith(".sh"))
        self.assertIn("kernel-checks.sh", fragments)
        for name in fragments:
            with self.subTest(name):
                result = subprocess.run(["/bin/busybox", "sh", "-n", os.path.join(GUEST, name)], capture_output=True, text=True)
                self.assertEqual(result.returncode, 0, f"busybox sh -n {name}: {result.stderr}")

    def test_the_inits_as_composed_parse_with_every_value_filled(self):
        inits = {"test-real-kernel": harness.kernel_init(), "test-real-kernel --explore": harness.kernel_init(explore=True),
                 "test-real-bluetooth": image.bluetooth_init(), "test-real-bluetooth --explore": image.bluetooth_init(explore=True)}
        for name, init in inits.items():
            with self.subTest(name):
                self.assertTrue(init.startswith("#!/bin/busybox sh\n"))
                self.assertEqual(re.findall(r"@[A-Z_]+@", init), [], "names the host should have filled in")
                result = subprocess.run(["/bin/busybox", "sh", "-n"], input=init, capture_output=True, text=True)
                self.assertEqual(result.returncode, 0, f"busybox sh -n, {name}'s init: {result.stderr}")
        self.assertIn(f"ALSA_CONFIG_UCM2={harness.GUEST_UCM_ROOT} alsaucm", inits["test-real-kernel"])
        self.assertIn("for m in bluetooth hci_vhci rfcomm ", inits["test-real-bluetooth"])


if __name__ == "__main__":
    unittest.main()
