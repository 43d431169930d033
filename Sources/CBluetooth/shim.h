// libbluetooth: bdaddr helpers and the HCI probe used to tell "no adapter".
#ifndef AUDIOROUTE_CBLUETOOTH_SHIM_H
#define AUDIOROUTE_CBLUETOOTH_SHIM_H
#include <sys/socket.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>
#endif
