"""Address bookkeeping for one subnet (EC2-SIM-2): /32s, aligned /28 prefixes and /80 IPv6 prefixes.

Addresses are offsets from the subnet's network address. The subnet is cut into /28 blocks of 16;
`_block_used[b]` counts the non-free addresses of block b (reserved ones included), and `_free_blocks`
holds the blocks with none, which are exactly the prefixes EC2 can delegate. AWS reserves the first
four and the last address, so the first and last blocks are never wholly free.

Placement of single addresses is a policy, because EC2 does not document its own:
- "random" (default): uniformly random among free addresses. EC2 scatters secondary IPs, which is
  what fragments subnets for prefix delegation; this is the worst case for prefixes.
- "packed": fill blocks that are already partly used before opening a wholly free one -- the best
  case for prefixes (fragmentation then only comes from releases).
Prefixes are taken at random among wholly free blocks. Every operation is O(1) per address (O(16)
per prefix): free addresses, wholly free blocks and partly used blocks each live in a `FreeSet`.
"""

from __future__ import annotations

import ipaddress
import random
from array import array

from reconciler.ec2.sim.freeset import FreeSet

PREFIX_SIZE = 16  # a /28
IPV6_SUBNET_PREFIXLEN = 64
IPV6_PREFIX_PREFIXLEN = 80
IPV6_SLOTS = 1 << (IPV6_PREFIX_PREFIXLEN - IPV6_SUBNET_PREFIXLEN)
RESERVED_HEAD = 4
RESERVED_TAIL = 1
PLACEMENTS = ("random", "packed")


class AddressError(Exception):
    """Raised with a reason; the simulator turns it into the EC2 error code it names."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Ipv4Pool:
    """Free and used IPv4 space of one subnet (IPv4 /16 .. /28)."""

    def __init__(self, cidr: str, placement: str = "random") -> None:
        net = ipaddress.IPv4Network(cidr)
        if not 16 <= net.prefixlen <= 28:
            raise ValueError(f"EC2 subnets are /16 to /28; {cidr} is not")
        if placement not in PLACEMENTS:
            raise ValueError(f"address placement is one of {PLACEMENTS}, not {placement!r}")
        self.placement = placement
        self.network = net
        self._base = int(net.network_address)
        self.size = net.num_addresses
        self._free = FreeSet(self.size, range(RESERVED_HEAD, self.size - RESERVED_TAIL))
        blocks = self.size // PREFIX_SIZE
        self._block_used = array("l", [0]) * blocks
        for offset in (*range(RESERVED_HEAD), self.size - 1):
            self._block_used[offset // PREFIX_SIZE] += 1
        self._free_blocks = FreeSet(blocks, (b for b in range(blocks) if self._block_used[b] == 0))
        self._partial_blocks = FreeSet(
            blocks, (b for b in range(blocks) if 0 < self._block_used[b] < PREFIX_SIZE)
        )

    # --- queries ---------------------------------------------------------------------------------
    @property
    def available(self) -> int:
        """AvailableIpAddressCount: free addresses (a delegated /28 takes 16)."""
        return len(self._free)

    @property
    def free_prefixes(self) -> int:
        return len(self._free_blocks)

    def contains(self, ip: str) -> bool:
        return ipaddress.IPv4Address(ip) in self.network

    def is_free(self, ip: str) -> bool:
        return self._offset(ip) in self._free

    # --- single addresses ------------------------------------------------------------------------
    def take_random(self, count: int, rng: random.Random) -> list[str]:
        if count > len(self._free):
            raise AddressError(
                "InsufficientFreeAddressesInSubnet",
                f"Subnet {self.network} has {len(self._free)} free addresses, {count} were requested.",
            )
        taken = []
        for _ in range(count):
            offset = self._pick_packed(rng) if self.placement == "packed" else self._free.pick(rng)
            self._take(offset)
            taken.append(self._ip(offset))
        return taken

    def _pick_packed(self, rng: random.Random) -> int:
        """A free address in a partly used block, else the first of a random wholly free block."""
        if len(self._partial_blocks):
            start = self._partial_blocks.pick(rng) * PREFIX_SIZE
            return next(o for o in range(start, start + PREFIX_SIZE) if o in self._free)
        return self._free_blocks.pick(rng) * PREFIX_SIZE

    def take_specific(self, ips: list[str]) -> list[str]:
        offsets = [self._checked_offset(ip) for ip in ips]
        if len(set(offsets)) != len(offsets):
            raise AddressError("InvalidParameterValue", "The same address was requested twice.")
        for ip, offset in zip(ips, offsets, strict=True):
            if offset not in self._free:
                raise AddressError("InvalidIPAddress.InUse", f"Address {ip} is already in use.")
        for offset in offsets:
            self._take(offset)
        return list(ips)

    def give_back(self, ip: str) -> None:
        offset = self._offset(ip)
        if offset in self._free or not RESERVED_HEAD <= offset < self.size - RESERVED_TAIL:
            raise ValueError(f"{ip} is not held in {self.network}")
        self._free.add(offset)
        block = offset // PREFIX_SIZE
        self._block_used[block] -= 1
        if self._block_used[block] == 0:
            self._partial_blocks.discard(block)
            self._free_blocks.add(block)
        else:
            self._partial_blocks.add(block)

    # --- /28 prefixes ----------------------------------------------------------------------------
    def take_random_prefixes(self, count: int, rng: random.Random) -> list[str]:
        if count > len(self._free_blocks):
            raise AddressError(
                "InsufficientCidrBlocks",
                f"Subnet {self.network} has {len(self._free_blocks)} aligned free /28 blocks, "
                f"{count} were requested.",
            )
        prefixes = []
        for _ in range(count):
            block = self._free_blocks.pick(rng)
            self._take_block(block)
            prefixes.append(self._prefix(block))
        return prefixes

    def take_specific_prefixes(self, prefixes: list[str]) -> list[str]:
        blocks = [self._checked_block(p) for p in prefixes]
        if len(set(blocks)) != len(blocks):
            raise AddressError("InvalidParameterValue", "The same prefix was requested twice.")
        for prefix, block in zip(prefixes, blocks, strict=True):
            if block not in self._free_blocks:
                raise AddressError("InvalidIPAddress.InUse", f"Prefix {prefix} overlaps addresses in use.")
        for block in blocks:
            self._take_block(block)
        return [self._prefix(b) for b in blocks]

    def give_back_prefix(self, prefix: str) -> None:
        block = self._checked_block(prefix)
        start = block * PREFIX_SIZE
        for offset in range(start, start + PREFIX_SIZE):
            self._free.add(offset)
        self._block_used[block] = 0
        self._free_blocks.add(block)

    # --- internals -------------------------------------------------------------------------------
    def _ip(self, offset: int) -> str:
        return str(ipaddress.IPv4Address(self._base + offset))

    def _prefix(self, block: int) -> str:
        return f"{self._ip(block * PREFIX_SIZE)}/28"

    def _offset(self, ip: str) -> int:
        return int(ipaddress.IPv4Address(ip)) - self._base

    def _checked_offset(self, ip: str) -> int:
        try:
            addr = ipaddress.IPv4Address(ip)
        except ValueError:
            raise AddressError("InvalidParameterValue", f"{ip!r} is not an IPv4 address.") from None
        if addr not in self.network:
            raise AddressError("InvalidParameterValue", f"Address {ip} is not in subnet {self.network}.")
        offset = int(addr) - self._base
        if not RESERVED_HEAD <= offset < self.size - RESERVED_TAIL:
            raise AddressError("InvalidParameterValue", f"Address {ip} is reserved by AWS in {self.network}.")
        return offset

    def _checked_block(self, prefix: str) -> int:
        try:
            net = ipaddress.IPv4Network(prefix)
        except ValueError:
            raise AddressError("InvalidParameterValue", f"{prefix!r} is not an aligned /28 prefix.") from None
        if net.prefixlen != 28 or not net.subnet_of(self.network):
            raise AddressError("InvalidParameterValue", f"Prefix {prefix} is not a /28 in {self.network}.")
        return (int(net.network_address) - self._base) // PREFIX_SIZE

    def _take(self, offset: int) -> None:
        self._free.remove(offset)
        block = offset // PREFIX_SIZE
        if self._block_used[block] == 0:
            self._free_blocks.remove(block)
        self._block_used[block] += 1
        if self._block_used[block] == PREFIX_SIZE:
            self._partial_blocks.discard(block)
        else:
            self._partial_blocks.add(block)

    def _take_block(self, block: int) -> None:
        self._free_blocks.remove(block)
        start = block * PREFIX_SIZE
        for offset in range(start, start + PREFIX_SIZE):
            self._free.remove(offset)
        self._block_used[block] = PREFIX_SIZE


class Ipv6Pool:
    """The /80 prefixes of one /64 subnet CIDR."""

    def __init__(self, cidr: str) -> None:
        net = ipaddress.IPv6Network(cidr)
        if net.prefixlen != IPV6_SUBNET_PREFIXLEN:
            raise ValueError(f"EC2 IPv6 subnet CIDRs are /64; {cidr} is not")
        self.network = net
        self._base = int(net.network_address)
        self._used: set[int] = set()

    def take_random_prefixes(self, count: int, rng: random.Random) -> list[str]:
        if count > IPV6_SLOTS - len(self._used):
            raise AddressError("InsufficientCidrBlocks", f"Subnet {self.network} has no free /80 prefixes.")
        prefixes = []
        step = 1 << (128 - IPV6_PREFIX_PREFIXLEN)
        for _ in range(count):
            slot = rng.randrange(IPV6_SLOTS)
            while slot in self._used:  # the space is 65,536 slots and sparsely used
                slot = (slot + 1) % IPV6_SLOTS
            self._used.add(slot)
            prefixes.append(f"{ipaddress.IPv6Address(self._base + slot * step)}/{IPV6_PREFIX_PREFIXLEN}")
        return prefixes

    def give_back_prefix(self, prefix: str) -> None:
        net = ipaddress.IPv6Network(prefix)
        step = 1 << (128 - IPV6_PREFIX_PREFIXLEN)
        self._used.discard((int(net.network_address) - self._base) // step)

    @property
    def used(self) -> int:
        return len(self._used)
