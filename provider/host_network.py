"""ENI-HOST-1: node OS snippets that keep NetworkManager / systemd-networkd away from Cilium's ENIs.

Why: a network manager that runs DHCP on a newly attached ENI, or drops its addresses when the
carrier flaps, breaks pod networking. Launch templates embed these files (user data) on every node.
"""

from __future__ import annotations

import re
import shlex

NETWORK_MANAGER_PATH = "/etc/NetworkManager/conf.d/99-unmanaged-devices.conf"
NETWORKD_PATH = "/etc/systemd/network/99-unmanaged-devices.network"
INTERFACE_PREFIX = re.compile(r"^[a-z][a-z0-9]{0,10}$")


def unmanaged_interface_snippets(interface_prefix: str = "eth") -> dict[str, str]:
    """File path -> content marking every `<prefix>N` device except `<prefix>0` as unmanaged."""
    if not INTERFACE_PREFIX.match(interface_prefix):
        raise ValueError(
            f"interface prefix {interface_prefix!r} must be a short device-name stem such as 'eth'"
        )
    primary = f"{interface_prefix}0"
    return {
        NETWORK_MANAGER_PATH: (
            "[keyfile]\n"
            f"unmanaged-devices=interface-name:{interface_prefix}*,except:interface-name:{primary}\n"
        ),
        NETWORKD_PATH: f"[Match]\nName={interface_prefix}[1-9]*\n\n[Link]\nUnmanaged=yes\n",
    }


def host_setup_script(interface_prefix: str = "eth") -> str:
    """A POSIX shell script (EC2 user data) writing the snippets and reloading whichever manager runs."""
    lines = ["#!/bin/sh", "set -eu"]
    for path, content in unmanaged_interface_snippets(interface_prefix).items():
        directory = path.rsplit("/", 1)[0]
        lines.append(f"mkdir -p {shlex.quote(directory)}")
        lines.append(f"printf '%s' {shlex.quote(content)} > {shlex.quote(path)}")
    lines.append("if systemctl is-active --quiet NetworkManager; then systemctl reload NetworkManager; fi")
    lines.append(
        "if systemctl is-active --quiet systemd-networkd; then systemctl restart systemd-networkd; fi"
    )
    return "\n".join(lines) + "\n"
