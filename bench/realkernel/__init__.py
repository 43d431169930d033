"""The real-kernel benches as a package: scripts/test-real-kernel and scripts/test-real-bluetooth
import it (bench/ on sys.path) and run kernel_bench.main and bluetooth_bench.main.

  harness   the kernel, the builds, the guest's parts (bench/guest/), the initramfs, QEMU, QMP
  files     the watcher of the guest's console and the cards' WAV files; the clocks' mapping
  signals   what the guest plays; analysis: what the cards' files and the recordings hold
  reports   the guest's reports read into values
  boot, cycles, jack, surround, capture, tower, ucm, routes, timing: the phases' checks
  bluetooth the Bluetooth bench's parts: its image, and its phases' checks (a module each)
The bench's own tests, without QEMU: bench/tests (python3 -m unittest discover -s bench/tests).
"""
