"""The Bluetooth bench's parts, as phases of the real-kernel harness (bluetooth_bench runs them in
order, scripts/test-real-bluetooth's entry point):

  image     bluez fetched, the guest's init and the initramfs with Bluetooth's parts
  logs      the guest's logs (`log NAME LINE`), the headset's ear, the bus's signals: read once here
  pairing, cycles, floor, plugin, calls, restart, system: a phase each, with its check
  timing    the first frame's timing, from the logs once the guest has powered off
"""
