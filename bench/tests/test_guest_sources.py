"""The guest's parts as the files they are: its C programs build with the host's cc without a
warning, its init's shell fragments and the kernel bench's phase scripts parse in the guest's
shell (busybox sh), and each phase script is its module's, packed and sourced."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from benchpath import GUEST
from realkernel import capture, cycles, hardware, harness, jack, multiroute, surround, sync, tower, ucm
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
        fragments += sorted(os.path.join("kernel", name) for name in os.listdir(os.path.join(GUEST, "kernel")))
        self.assertIn(ucm.GUEST_SCRIPT, fragments)
        for name in fragments:
            with self.subTest(name):
                result = subprocess.run(["/bin/busybox", "sh", "-n", os.path.join(GUEST, name)], capture_output=True, text=True)
                self.assertEqual(result.returncode, 0, f"busybox sh -n {name}: {result.stderr}")

    def test_each_phase_module_names_its_script_which_is_packed_and_sourced_in_order(self):
        scripts = [cycles.GUEST_SCRIPT, cycles.PLUGIN_GUEST_SCRIPT, jack.GUEST_SCRIPT, sync.GUEST_SCRIPT, hardware.GUEST_SCRIPT, surround.GUEST_SCRIPT,
                   capture.GUEST_SCRIPT, multiroute.GUEST_SCRIPT, tower.GUEST_SCRIPT, ucm.GUEST_SCRIPT, tower.LOST_GUEST_SCRIPT]
        for script in scripts:
            self.assertTrue(os.path.isfile(os.path.join(GUEST, script)), f"{script}: no such file in bench/guest")
        # Every phase script is a module's, in the initramfs where kernel-checks.sh sources it, in the
        # bench's order (the checks wait for the reports in that order).
        packed = {host: guest for host, guest in harness.kernel_phase_files()}
        self.assertEqual(sorted(packed), sorted(os.path.join(GUEST, script) for script in scripts))
        sourced = re.findall(r"^\. \$PHASES/(\S+)$", harness.kernel_init(), re.MULTILINE)
        self.assertIn(f"PHASES={harness.GUEST_PHASES}\n", harness.kernel_init())
        self.assertEqual([f"{harness.GUEST_PHASES}/{name}" for name in sourced],
                         [packed[os.path.join(GUEST, script)] for script in scripts])

    def test_the_inits_as_composed_parse_with_every_value_filled(self):
        inits = {"test-real-kernel": harness.kernel_init(), "test-real-kernel --explore": harness.kernel_init(explore=True),
                 "test-real-bluetooth": image.bluetooth_init(), "test-real-bluetooth --explore": image.bluetooth_init(explore=True)}
        for name, init in inits.items():
            with self.subTest(name):
                self.assertTrue(init.startswith("#!/bin/busybox sh\n"))
                self.assertEqual(re.findall(r"@[A-Z_]+@", init), [], "names the host should have filled in")
                result = subprocess.run(["/bin/busybox", "sh", "-n"], input=init, capture_output=True, text=True)
                self.assertEqual(result.returncode, 0, f"busybox sh -n, {name}'s init: {result.stderr}")
        # The values the phase scripts read are set before them.
        self.assertIn(f"\nUCM_ROOT={harness.GUEST_UCM_ROOT}\nCAPTURE_SLOT={harness.CAPTURE_SLOT}\n", inits["test-real-kernel"])
        self.assertIn("ALSA_CONFIG_UCM2=$UCM_ROOT alsaucm", harness.guest_text(ucm.GUEST_SCRIPT))
        self.assertIn("for m in bluetooth hci_vhci rfcomm ", inits["test-real-bluetooth"])


if __name__ == "__main__":
    unittest.main()
