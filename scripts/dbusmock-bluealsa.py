"""python-dbusmock template: a minimal BlueALSA (org.bluealsa) for the BlueZ watcher's tests.

Only what the watcher reads: an ObjectManager at /org/bluealsa whose objects carry
org.bluealsa.PCM1 with Device, Transport and Mode. PCMs are added by the test bench
with AddObject plus an InterfacesAdded signal, as bluealsad announces them.
"""

BUS_NAME = 'org.bluealsa'
MAIN_OBJ = '/org/bluealsa'
MAIN_IFACE = 'org.bluealsa.Manager1'
SYSTEM_BUS = True
IS_OBJECT_MANAGER = True


def load(mock, _parameters):
    mock.AddProperties(MAIN_IFACE, {'Version': 'mock'})
