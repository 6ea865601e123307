# Wi-Fi station bring-up for MicroPython boards (network.WLAN): the boards export it as
# connect_wifi, and rssi() as wifi_rssi. connect() blocks until connected or timeout_s,
# polling every 100 ms.
import time

import network


def connect(ssid, password, timeout_s=20):
    """True once associated and given an address; False on timeout (the app may retry)."""
    wlan = network.WLAN(network.STA_IF)
    wlan.active(True)
    if not wlan.isconnected():
        wlan.connect(ssid, password)
        for _ in range(timeout_s * 10):
            if wlan.isconnected():
                break
            time.sleep(0.1)
    return wlan.isconnected()


def rssi():
    """The access point's signal in dBm; None while not connected."""
    wlan = network.WLAN(network.STA_IF)
    return wlan.status("rssi") if wlan.isconnected() else None
