"""python-dbusmock template: a minimal BlueALSA (org.bluealsa) for the BlueZ watcher's tests.

Only what the watcher reads: an ObjectManager at /org/bluealsa whose objects carry
org.bluealsa.PCM1 with Device, Transport and Mode. PCMs are added by the test bench
with AddObject plus an InterfacesAdded signal, as bluealsad announces them.

Values as BlueALSA 4.0.0 exports them (src/bluealsa-iface.h, doc/bluealsa-api.txt), and as
real `bluealsa -i hci0 -p a2dp-source -p hfp-ag` showed in the real-kernel guest (issue 18):
Transport names this machine's role ("A2DP-source", "HFP-AG" on the computer; "A2DP-sink",
"HFP-HF", "HSP-AG", "HSP-HS" otherwise), Mode is "sink" (written to) or "source" (read from),
Device is the BlueZ device object path, and object paths are
/org/bluealsa/hciN/dev_XX_XX_XX_XX_XX_XX/<type>/<mode>, e.g. .../a2dpsrc/sink.
"""

BUS_NAME = 'org.bluealsa'
MAIN_OBJ = '/org/bluealsa'
MAIN_IFACE = 'org.bluealsa.Manager1'
SYSTEM_BUS = True
IS_OBJECT_MANAGER = True


def load(mock, _parameters):
    mock.AddProperties(MAIN_IFACE, {'Version': 'mock'})
