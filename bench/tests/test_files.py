"""The watcher of the cards' WAV files (realkernel.files): a file QEMU truncated and started again
is read from its start, also when the new file has already grown past the old one's end before
the watcher looks (a busy host)."""
import array, os, tempfile, time, unittest

import benchpath  # noqa: F401
from realkernel.files import Files


def header(size):
    """QEMU's WAV header (audio/wavaudio.c): 48 kHz stereo S16, the data's size, 0 while it is open."""
    return (b"RIFF" + (size + 36).to_bytes(4, "little") + b"WAVEfmt " + (16).to_bytes(4, "little") + (1).to_bytes(2, "little")
            + (2).to_bytes(2, "little") + (48000).to_bytes(4, "little") + (192000).to_bytes(4, "little")
            + (4).to_bytes(2, "little") + (16).to_bytes(2, "little") + b"data" + size.to_bytes(4, "little"))


def frames(count, value):
    return array.array("h", [value] * (2 * count)).tobytes()


class TruncatedFiles(unittest.TestCase):
    def test_a_file_started_again_is_read_from_its_start(self):
        with tempfile.TemporaryDirectory() as work:
            console, wav = os.path.join(work, "console.log"), os.path.join(work, "usb.wav")
            open(console, "w").close()
            files = Files(console, {"usb": wav})
            files.stop()  # read by hand below, at the moments the test chooses
            with open(wav, "wb") as f:
                f.write(header(0) + frames(4000, 0))
            files.read_wav("usb", wav, time.monotonic())
            # Closed: QEMU writes the size into the header.
            with open(wav, "r+b") as f:
                f.write(header(16000))
            files.read_wav("usb", wav, time.monotonic())
            # Opened again (truncated), and grown past the old end before the next read.
            with open(wav, "wb") as f:
                f.write(header(0) + frames(8000, 5000))
            files.read_wav("usb", wav, time.monotonic())
            self.assertEqual(files.audible("usb"), 8000 / 48000)


if __name__ == "__main__":
    unittest.main()
